package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mutantLines renders each mutant as "line kind: the line after", the
// form the expectations below are written in.
func mutantLines(t *testing.T, src string, ms []Mutant) []string {
	t.Helper()
	var out []string
	for _, m := range ms {
		_, after := m.diff(src)
		out = append(out, fmt.Sprintf("%d %s: %s", m.Line, m.Kind, after))
	}
	return out
}

func requireLines(t *testing.T, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("mutants:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

const goSnippet = `package p

import "errors"

// a < b in a comment stays.
func f(a, b int, xs []int) (int, error) {
	if a < b && !ok(a) {
		return 0, errors.New("a < b")
	}
	x := 2
	x = a
	x++
	g(x)
	err := h()
	if err != nil {
		return x, err
	}
	return x, nil
}
`

func TestGenerateGoMutatesCodeNotCommentsOrStrings(t *testing.T) {
	t.Parallel()
	ms, err := generate("p/p.go", goSnippet)
	if err != nil {
		t.Fatal(err)
	}
	requireLines(t, mutantLines(t, goSnippet, ms), []string{
		"7 < → <=: if a <= b && !ok(a) {",
		"7 && → ||: if a < b || !ok(a) {",
		"7 drop !: if a < b && ok(a) {",
		"8 0 → 1: return 1, errors.New(\"a < b\")",
		"8 return error → nil: return 0, nil",
		"10 2 → 3: x := 3",
		"11 drop assignment: ",
		"12 drop ++: ",
		"13 drop call: ",
		"15 != → ==: if err == nil {",
		"16 return err → nil: return x, nil",
	})
	for _, m := range ms {
		mutated, err := m.apply(goSnippet)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parser.ParseFile(token.NewFileSet(), "p.go", mutated, 0); err != nil {
			t.Errorf("%s does not parse: %v", m, err)
		}
	}
}

const unusedSnippet = `package p

import (
	"fmt"
	"strings"
)

func f(hs [][2]string, set func(string, string)) []string {
	var out []string
	for _, h := range hs {
		set(h[0], h[1])
	}
	out = append(out, strings.ToLower("A"))
	fmt.Println(len(hs))
	func() { v := 1; set(fmt.Sprint(v), "") }()
	return nil
}

func g(scan func() error) (int, error) {
	err := scan()
	return 1, err
}
`

// A statement that holds every read of a variable or an import is not
// dropped, nor is a variable's one read returned as nil: the mutant would
// not compile. A statement whose variables are its own, or are read
// elsewhere too, is dropped.
func TestGenerateGoDropsNoStatementAVariableNeeds(t *testing.T) {
	t.Parallel()
	ms, err := generate("p/p.go", unusedSnippet)
	if err != nil {
		t.Fatal(err)
	}
	var drops []string
	for _, line := range mutantLines(t, unusedSnippet, ms) {
		if strings.Contains(line, " drop ") || strings.Contains(line, "→ nil") {
			drops = append(drops, line)
		}
	}
	requireLines(t, drops, []string{
		"14 drop call: ",
		"15 drop call: ",
	})
}

// A constant at its type's largest value moves down, not up: 0xff + 1
// is no byte.
func TestGenerateGoKeepsConstantsInTheirType(t *testing.T) {
	t.Parallel()
	src := "package p\n\nvar b = []byte{0xff, 9}\n"
	ms, err := generate("p/p.go", src)
	if err != nil {
		t.Fatal(err)
	}
	requireLines(t, mutantLines(t, src, ms), []string{
		"3 0xff → 254: var b = []byte{254, 9}",
		"3 9 → 10: var b = []byte{0xff, 10}",
	})
}

func TestGenerateGoRefusesWhatDoesNotParse(t *testing.T) {
	t.Parallel()
	if _, err := generate("p.go", "package p\nfunc {"); err == nil {
		t.Fatal("no error for a file that does not parse")
	}
}

const sqlSnippet = `-- Claims the oldest due send; a claim WHERE a = b in a comment stays.
UPDATE send SET state = 'claimed', note = 'a < b'
WHERE id = (SELECT id FROM send
            WHERE destination = @destination AND due_at <= now()
              AND attempts < @max
              AND (state = 'pending'
                   OR state = 'retry')
            ORDER BY due_at
            FOR UPDATE SKIP LOCKED
            LIMIT 1)
RETURNING id;
INSERT INTO seen (id) VALUES (@id)
ON CONFLICT (id) DO NOTHING;
INSERT INTO last (id, at) VALUES (@id, @at)
ON CONFLICT (id) DO UPDATE SET at = excluded.at WHERE last.at < excluded.at;
`

func TestGenerateSQLMutatesPredicatesLocksAndConflicts(t *testing.T) {
	t.Parallel()
	ms, err := generate("q.sql", sqlSnippet)
	if err != nil {
		t.Fatal(err)
	}
	requireLines(t, mutantLines(t, sqlSnippet, ms), []string{
		"3 = → <>: WHERE id <> (SELECT id FROM send",
		"4 = → <>: WHERE destination <> @destination AND due_at <= now()",
		"4 <= → <: WHERE destination = @destination AND due_at < now()",
		"5 drop AND line: ",
		"5 < → <=: AND attempts <= @max",
		"6 drop AND line: ",
		"6 = → <>: AND (state <> 'pending'",
		"7 = → <>: OR state <> 'retry')",
		"9 drop FOR UPDATE SKIP LOCKED: ",
		"9 drop SKIP LOCKED: FOR UPDATE",
		"13 drop ON CONFLICT DO NOTHING: ;",
		"15 < → <=: ON CONFLICT (id) DO UPDATE SET at = excluded.at WHERE last.at <= excluded.at;",
	})
	// The AND line whose parentheses open spans both of their lines.
	for _, m := range ms {
		if m.Kind == "drop AND line" && m.Line == 6 {
			if got := sqlSnippet[m.Start:m.End]; strings.Count(got, "\n") != 2 || !strings.HasSuffix(got, "'retry')\n") {
				t.Fatalf("dropped %q, want lines 6 and 7", got)
			}
		}
	}
}

func TestPickIsDeterministicAndSpreadOverFiles(t *testing.T) {
	t.Parallel()
	var ms []Mutant
	for i := range 30 {
		ms = append(ms, Mutant{File: "a.go", Start: i, End: i + 1})
	}
	for i := range 3 {
		ms = append(ms, Mutant{File: "b.sql", Start: i, End: i + 1})
	}
	one, again, other := pick(ms, 8, 1), pick(ms, 8, 1), pick(ms, 8, 2)
	if !slices.Equal(one, again) {
		t.Fatalf("seed 1 picked %v, then %v", one, again)
	}
	if slices.Equal(one, other) {
		t.Fatalf("seeds 1 and 2 picked the same %v", one)
	}
	inB := 0
	for _, m := range one {
		if m.File == "b.sql" {
			inB++
		}
	}
	if len(one) != 8 || inB != 3 {
		t.Fatalf("picked %d, %d of them in b.sql; want 8, all 3 of b.sql", len(one), inB)
	}
	if got := pick(ms, 100, 1); len(got) != len(ms) {
		t.Fatalf("picked %d of %d with room for all", len(got), len(ms))
	}
}

func TestRowsGatherTheirFilesAndTests(t *testing.T) {
	t.Parallel()
	table := []Mutation{
		{Name: "a", Promise: "Offsets move late", File: "k/c.go", Pkgs: []string{"./k"}, Run: "^TestA$"},
		{Name: "b", Promise: "Offsets move late", File: "k/c.sql", Pkgs: []string{"./k", "./drills"}, Run: "^TestB$"},
		{Name: "c", Promise: "Other", File: "o.go", Pkgs: []string{"./o"}, Run: "^TestC$"},
	}
	rows, err := rowsMatching(table, "Offsets")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || !slices.Equal(rows[0].files, []string{"k/c.go", "k/c.sql"}) {
		t.Fatalf("rows %+v", rows)
	}
	pkgs, runs := rows[0].tests()
	if !slices.Equal(pkgs, []string{"./drills", "./k"}) || runs["./k"] != "(?:^TestA$)|(?:^TestB$)" || runs["./drills"] != "(?:^TestB$)" {
		t.Fatalf("tests %v %v", pkgs, runs)
	}
	if _, err := rowsMatching(table, "nothing like it"); err == nil {
		t.Fatal("no error for a -row that selects nothing")
	}
}

// Every row of the table generates mutants from its files as they are.
func TestEveryRowGenerates(t *testing.T) {
	t.Parallel()
	rows, err := rowsMatching(mutations, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		for _, f := range r.files {
			b, err := os.ReadFile(filepath.Join("..", "..", f))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := generate(f, string(b)); err != nil {
				t.Errorf("row %q: %v", r.promise, err)
			}
		}
	}
}
