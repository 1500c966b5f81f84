package main

import (
	"regexp"
	"strings"
)

var (
	sqlLockClause = regexp.MustCompile(`(?i)\bFOR\s+(?:NO\s+KEY\s+UPDATE|UPDATE|KEY\s+SHARE|SHARE)(?:\s+OF\s+\w+(?:\s*,\s*\w+)*)?(?:\s+(?:SKIP\s+LOCKED|NOWAIT))?`)
	sqlSkipLocked = regexp.MustCompile(`(?i)\s+SKIP\s+LOCKED\b`)
	sqlOnConflict = regexp.MustCompile(`(?i)\bON\s+CONFLICT\b`)
	sqlDoAction   = regexp.MustCompile(`(?i)\bDO\s+(NOTHING|UPDATE)\b`)
	sqlAndLine    = regexp.MustCompile(`(?i)^\s*AND\b`)
	sqlWord       = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
)

// sqlSwaps are the predicate operator mutants.
var sqlSwaps = map[string]string{
	"=": "<>", "<>": "=", "!=": "=",
	"<": "<=", "<=": "<", ">": ">=", ">=": ">",
}

// sqlPredicateWords begin a predicate; sqlOtherWords begin a clause
// whose '=' is an assignment or whose operators are not a row's test.
var (
	sqlPredicateWords = map[string]bool{"where": true, "and": true, "or": true, "on": true, "when": true, "having": true}
	sqlOtherWords     = map[string]bool{"set": true, "select": true, "values": true, "returning": true, "then": true,
		"else": true, "end": true, "from": true, "by": true, "limit": true, "using": true, "into": true}
)

// generateSQL returns the mutants of a SQL file, found in its text with
// comments and string literals blanked out:
//
//   - a row lock dropped (FOR UPDATE, FOR NO KEY UPDATE, … with its SKIP
//     LOCKED), and SKIP LOCKED alone;
//   - ON CONFLICT … DO NOTHING dropped;
//   - a comparison in a predicate (after WHERE, AND, OR, ON, WHEN,
//     HAVING) swapped: = ↔ <>, < ↔ <=, > ↔ >=;
//   - a line beginning AND dropped, with the lines its parentheses span.
//
// The rules keep to changes that parse; one that does not is failed by
// PostgreSQL with a class 42 SQLSTATE, which the run counts invalid.
func generateSQL(file, src string) []Mutant {
	code := blankSQL(src)
	var ms []Mutant
	add := func(kind string, start, end int, replace string) {
		ms = append(ms, Mutant{File: file, Line: lineAt(src, start), Kind: kind, Start: start, End: end, Replace: replace})
	}
	for _, loc := range sqlLockClause.FindAllStringIndex(code, -1) {
		add("drop "+strings.Join(strings.Fields(strings.ToUpper(code[loc[0]:loc[1]])), " "), loc[0], loc[1], "")
	}
	for _, loc := range sqlSkipLocked.FindAllStringIndex(code, -1) {
		add("drop SKIP LOCKED", loc[0], loc[1], "")
	}
	for _, loc := range sqlOnConflict.FindAllStringIndex(code, -1) {
		do := sqlDoAction.FindStringSubmatchIndex(code[loc[1]:])
		if do != nil && strings.EqualFold(code[loc[1]+do[2]:loc[1]+do[3]], "nothing") {
			add("drop ON CONFLICT DO NOTHING", loc[0], loc[1]+do[1], "")
		}
	}
	sqlOperators(code, add)
	sqlAndLines(code, add)
	return ms
}

// sqlOperators adds a mutant per comparison operator in a predicate.
func sqlOperators(code string, add func(string, int, int, string)) {
	const opChars = "<>=!~@#%^&|*+-/"
	predicate := false
	for i := 0; i < len(code); {
		if loc := sqlWord.FindStringIndex(code[i:]); loc != nil && loc[0] == 0 {
			w := strings.ToLower(code[i : i+loc[1]])
			switch {
			case sqlPredicateWords[w]:
				predicate = true
			case sqlOtherWords[w]:
				predicate = false
			}
			i += loc[1]
			continue
		}
		if strings.IndexByte(opChars, code[i]) < 0 {
			i++
			continue
		}
		j := i
		for j < len(code) && strings.IndexByte(opChars, code[j]) >= 0 {
			j++
		}
		if to, ok := sqlSwaps[code[i:j]]; ok && predicate {
			add(code[i:j]+" → "+to, i, j, to)
		}
		i = j
	}
}

// sqlAndLines adds a mutant per line that begins with AND: the line
// dropped, with the following lines its open parentheses span.
func sqlAndLines(code string, add func(string, int, int, string)) {
	lines := strings.SplitAfter(code, "\n")
	start := 0
	for i, l := range lines {
		if sqlAndLine.MatchString(l) {
			end, depth := start, 0
			for j := i; j < len(lines); j++ {
				end += len(lines[j])
				depth += strings.Count(lines[j], "(") - strings.Count(lines[j], ")")
				if depth <= 0 {
					break
				}
			}
			add("drop AND line", start, end, "")
		}
		start += len(l)
	}
}

// blankSQL returns src with its comments and the contents of its string
// literals and quoted identifiers replaced by spaces, newlines kept, so
// that offsets into it are offsets into src.
func blankSQL(src string) string {
	b := []byte(src)
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '-' && i+1 < len(b) && b[i+1] == '-':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			stop := len(b)
			if end >= 0 {
				stop = i + 2 + end + 2
			}
			for ; i < stop; i++ {
				if b[i] != '\n' {
					b[i] = ' '
				}
			}
			i--
		case b[i] == '\'' || b[i] == '"':
			q := b[i]
			for i++; i < len(b) && b[i] != q; i++ {
				if b[i] != '\n' {
					b[i] = ' '
				}
			}
		}
	}
	return string(b)
}
