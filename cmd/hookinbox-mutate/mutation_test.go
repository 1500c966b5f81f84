package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestApplyReplacesTheOneAnchor(t *testing.T) {
	t.Parallel()
	m := Mutation{Name: "m", File: "f.go", Edits: []Edit{{Find: "a == b", Replace: "true"}}}
	got, err := m.apply("if a == b {\n}\n")
	if err != nil {
		t.Fatal(err)
	}
	if got != "if true {\n}\n" {
		t.Fatalf("got %q", got)
	}
}

func TestApplyRefusesAMissingOrRepeatedAnchor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, src string }{
		{"missing", "if a != b {}"},
		{"repeated", "a == b; a == b"},
	} {
		m := Mutation{Name: "guard-removed", File: "f.go", Edits: []Edit{{Find: "a == b", Replace: "true"}}}
		_, err := m.apply(tc.src)
		if !errors.Is(err, errAnchor) {
			t.Fatalf("%s: err = %v, want errAnchor", tc.name, err)
		}
		if !strings.Contains(err.Error(), "guard-removed") {
			t.Fatalf("%s: error does not name the mutation: %v", tc.name, err)
		}
	}
}

// A later edit's anchor is looked for in what the earlier edits left.
func TestApplyEditsInOrder(t *testing.T) {
	t.Parallel()
	m := Mutation{Name: "m", File: "f.go", Edits: []Edit{{Find: "x", Replace: "y"}, {Find: "yz", Replace: "ok"}}}
	got, err := m.apply("xz")
	if err != nil || got != "ok" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestCheckReadsTheFileWithoutChangingIt(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	path := filepath.Join(root, "f.sql")
	if err := os.WriteFile(path, []byte("ON CONFLICT DO NOTHING"), 0o644); err != nil {
		t.Fatal(err)
	}
	ok := Mutation{Name: "m", File: "f.sql", Edits: []Edit{{Find: "ON CONFLICT DO NOTHING", Replace: ""}}}
	if err := ok.check(root); err != nil {
		t.Fatal(err)
	}
	gone := Mutation{Name: "m", File: "f.sql", Edits: []Edit{{Find: "ON CONFLICT (id)", Replace: ""}}}
	if err := gone.check(root); !errors.Is(err, errAnchor) {
		t.Fatalf("err = %v, want errAnchor", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "ON CONFLICT DO NOTHING" {
		t.Fatalf("check changed the file: %q", b)
	}
}

func TestValidateRefusesABadTable(t *testing.T) {
	t.Parallel()
	good := Mutation{Name: "a-b", Promise: "p", File: "f", Edits: []Edit{{"x", "y"}}, Pkgs: []string{"./x"}, Run: "^TestX$"}
	if err := validate([]Mutation{good}); err != nil {
		t.Fatal(err)
	}
	slash, upper, noRun := good, good, good
	slash.Name, slash.Run = "slash", "TestX/sub"
	upper.Name = "Upper"
	noRun.Name, noRun.Run = "no-run", ""
	for _, bad := range [][]Mutation{{good, good}, {slash}, {upper}, {noRun}} {
		if err := validate(bad); err == nil {
			t.Fatalf("validate(%v) = nil", bad)
		}
	}
}

// The shipped table applies to this tree: a renamed anchor fails here,
// in go test ./..., before CI runs the mutations.
func TestEveryMutationApplies(t *testing.T) {
	t.Parallel()
	if err := validate(mutations); err != nil {
		t.Fatal(err)
	}
	for _, m := range mutations {
		if err := m.check(filepath.Join("..", "..")); err != nil {
			t.Error(err)
		}
	}
}

func TestImportPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{".": "m", "./ingest": "m/ingest", "./internal/admin": "m/internal/admin"} {
		if got := importPath("m", in); got != want {
			t.Errorf("importPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestVerdict(t *testing.T) {
	t.Parallel()
	run := func(lines ...string) *testRun {
		r := &testRun{results: map[string]string{}, output: map[string]*bytes.Buffer{}}
		for _, l := range lines {
			r.add([]byte(l))
		}
		return r
	}
	for name, tc := range map[string]struct {
		r    *testRun
		want outcome
	}{
		"pass": {run(`{"Action":"pass","Package":"m/x","Test":"TestA"}`), outcomeSurvived},
		"fail": {run(`{"Action":"fail","Package":"m/x","Test":"TestA"}`, `{"Action":"fail","Package":"m/x"}`), outcomeKilled},
		"sub":  {run(`{"Action":"fail","Package":"m/x","Test":"TestA/b"}`, `{"Action":"fail","Package":"m/x"}`), outcomeKilled},
		"build": {run(`{"Action":"build-fail","ImportPath":"m/x [m/x.test]"}`,
			`{"Action":"fail","Package":"m/x","FailedBuild":"m/x [m/x.test]"}`), outcomeBroken},
	} {
		if got, _ := tc.r.verdict(); got != tc.want {
			t.Errorf("%s: verdict %s, want %s", name, got, tc.want)
		}
	}
}
