package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestListedTestsArePickedFromGoTestListOutput(t *testing.T) {
	t.Parallel()
	out := "TestA\nExampleB\nFuzzC\nBenchmarkD\n2025/01/02 03:04:05 testdb: started\nok  \tm/x\t0.012s\n"
	got := listedTests([]byte(out))
	if want := []string{"TestA", "ExampleB", "FuzzC"}; !slices.Equal(got, want) {
		t.Fatalf("listedTests = %q, want %q", got, want)
	}
}

// With the baseline skipped, go test -list still finds the mutation whose
// regex selects no test (a test renamed, a package mistyped), naming it,
// and only it.
func TestListCheckNamesAMutationThatSelectsNoTest(t *testing.T) {
	t.Parallel()
	dir := writeModule(t, map[string]string{
		"x/x_test.go": "package x\n\nimport \"testing\"\n\nfunc TestKept(t *testing.T) {}\n\nfunc BenchmarkKept(b *testing.B) {}\n",
		"y/y_test.go": "package y\n\nimport \"testing\"\n\nfunc TestOther(t *testing.T) {}\n",
	})
	m := func(name, run string, pkgs ...string) Mutation {
		return Mutation{Name: name, Pkgs: pkgs, Run: run}
	}
	ms := []Mutation{
		m("kept", "^TestKept$", "./x"),
		m("kept-in-two-packages", "^(TestKept|TestOther)$", "./x", "./y"),
		m("renamed", "^TestRenamed$", "./x"),
		m("benchmark-only", "^BenchmarkKept$", "./x"),
		m("wrong-package", "^TestKept$", "./y"),
	}
	err := listCheck(context.Background(), []string{dir}, "m", ms)
	if err == nil {
		t.Fatal("listCheck = nil, want the mutations that select no test")
	}
	for _, name := range []string{"renamed", "benchmark-only", "wrong-package"} {
		if !strings.Contains(err.Error(), "mutation "+name+":") {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
	for _, name := range []string{"kept", "kept-in-two-packages"} {
		if strings.Contains(err.Error(), "mutation "+name+":") {
			t.Errorf("error names %s, whose regex selects a test: %v", name, err)
		}
	}
}

// A package whose tests do not compile fails the check, naming the
// package, rather than listing nothing.
func TestListCheckFailsOnATestThatDoesNotCompile(t *testing.T) {
	t.Parallel()
	dir := writeModule(t, map[string]string{
		"z/z_test.go": "package z\n\nimport \"testing\"\n\nfunc TestBroken(t *testing.T) { undefined() }\n",
	})
	err := listCheck(context.Background(), []string{dir}, "m", []Mutation{{Name: "broken", Pkgs: []string{"./z"}, Run: "^TestBroken$"}})
	if err == nil || !strings.Contains(err.Error(), "go test -list ./z") {
		t.Fatalf("listCheck = %v, want go test -list ./z failing", err)
	}
}

// writeModule writes module m, with files, into a directory of its own.
func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module m\n\ngo 1.22\n"
	for name, src := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
