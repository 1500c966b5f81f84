package main

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Mutant is a generated mutation: one change at one place of one file,
// chosen by rule (an operator, a statement, a constant, a lock clause)
// rather than by the hand that wrote the tests. The table's mutations say
// where a promise is decided; mutants ask whether the tests notice a
// change anywhere in the files that decide it.
type Mutant struct {
	// File is the file changed, relative to the module root.
	File string
	// Line is the line of Start, from 1.
	Line int
	// Kind names the rule that made the mutant ("== → !=", "drop call").
	Kind string
	// Start and End are the byte offsets of the text replaced.
	Start, End int
	// Replace is what src[Start:End] becomes.
	Replace string
}

// apply returns src with the mutant's change, or an error when src is
// not the text the mutant was generated from.
func (m Mutant) apply(src string) (string, error) {
	if m.Start < 0 || m.End > len(src) || m.Start > m.End {
		return "", fmt.Errorf("mutant %s: offsets %d..%d outside the file", m, m.Start, m.End)
	}
	return src[:m.Start] + m.Replace + src[m.End:], nil
}

func (m Mutant) String() string { return fmt.Sprintf("%s:%d (%s)", m.File, m.Line, m.Kind) }

// diff returns the first changed line of src as it was and as the mutant
// leaves it, trimmed, for a person to read.
func (m Mutant) diff(src string) (before, after string) {
	lineStart := strings.LastIndexByte(src[:m.Start], '\n') + 1
	lineEnd := len(src)
	if i := strings.IndexByte(src[m.End:], '\n'); i >= 0 {
		lineEnd = m.End + i
	}
	before = src[lineStart:lineEnd]
	after = src[lineStart:m.Start] + m.Replace + src[m.End:lineEnd]
	if strings.HasSuffix(src[m.Start:m.End], "\n") { // whole lines dropped
		before = src[lineStart:m.End]
		after = src[lineStart:m.Start] + m.Replace
	}
	return firstLine(before), firstLine(after)
}

// generate returns every mutant of one file, in the order of their
// offsets. Go files are mutated through their syntax tree, SQL files by
// their text; other files have none.
func generate(file, src string) ([]Mutant, error) {
	var ms []Mutant
	var err error
	switch path.Ext(file) {
	case ".go":
		ms, err = generateGo(file, src)
	case ".sql":
		ms = generateSQL(file, src)
	}
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(ms, func(a, b Mutant) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End), strings.Compare(a.Replace, b.Replace))
	})
	// Two rules may make the same change (a dropped clause twice over).
	return slices.CompactFunc(ms, func(a, b Mutant) bool {
		return a.Start == b.Start && a.End == b.End && a.Replace == b.Replace
	}), nil
}

// lineAt is the line of offset in src, from 1.
func lineAt(src string, offset int) int { return strings.Count(src[:offset], "\n") + 1 }

// pick chooses up to n of ms, the same ones for the same seed, spread over
// their files: each file's mutants are shuffled, then the files take
// turns. The chosen are returned in file and offset order.
func pick(ms []Mutant, n int, seed uint64) []Mutant {
	byFile := map[string][]Mutant{}
	var files []string
	for _, m := range ms {
		if byFile[m.File] == nil {
			files = append(files, m.File)
		}
		byFile[m.File] = append(byFile[m.File], m)
	}
	slices.Sort(files)
	rng := rand.New(rand.NewPCG(seed, 0x686f6f6b696e626f)) // "hookinbo"
	for _, f := range files {
		rng.Shuffle(len(byFile[f]), func(i, j int) { byFile[f][i], byFile[f][j] = byFile[f][j], byFile[f][i] })
	}
	var out []Mutant
	for len(out) < n {
		took := false
		for _, f := range files {
			if len(out) < n && len(byFile[f]) > 0 {
				out = append(out, byFile[f][0])
				byFile[f] = byFile[f][1:]
				took = true
			}
		}
		if !took {
			break
		}
	}
	slices.SortFunc(out, func(a, b Mutant) int {
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End))
	})
	return out
}

// row is a promise of docs/guarantees.md as the table knows it: the files
// its mutations change and the tests they run. Generated mutants of a row
// are made in those files and judged by those tests. Only the files the
// table names: they are where the promise is decided, and their package's
// tests are the ones named; a file the row's code merely calls would be
// judged by tests that were not written for it.
type row struct {
	promise string
	files   []string
	ms      []Mutation
}

// rowsMatching returns the rows whose promise matches pattern, in the
// table's order.
func rowsMatching(ms []Mutation, pattern string) ([]row, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("-row: %w", err)
	}
	var rows []row
	at := map[string]int{}
	for _, m := range ms {
		if !re.MatchString(m.Promise) {
			continue
		}
		i, ok := at[m.Promise]
		if !ok {
			i = len(rows)
			at[m.Promise] = i
			rows = append(rows, row{promise: m.Promise})
		}
		r := &rows[i]
		r.ms = append(r.ms, m)
		if !slices.Contains(r.files, m.File) {
			r.files = append(r.files, m.File)
		}
	}
	if len(rows) == 0 {
		return nil, errors.New("-row " + pattern + " matches no promise of the table")
	}
	for i := range rows {
		slices.Sort(rows[i].files)
	}
	return rows, nil
}

// tests returns the row's packages and, for each, the -run regex that
// selects every test the row's mutations name in it.
func (r row) tests() (pkgs []string, runs map[string]string) {
	byPkg := map[string][]string{}
	for _, m := range r.ms {
		for _, p := range m.Pkgs {
			if byPkg[p] == nil {
				pkgs = append(pkgs, p)
			}
			byPkg[p] = append(byPkg[p], "(?:"+m.Run+")")
		}
	}
	slices.Sort(pkgs)
	runs = map[string]string{}
	for p, rs := range byPkg {
		runs[p] = strings.Join(dedupe(rs), "|")
	}
	return pkgs, runs
}
