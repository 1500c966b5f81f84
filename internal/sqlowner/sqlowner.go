// Package sqlowner keeps a set of tables' SQL with the package that owns
// them (internal/riverdb owns River's): the owner's test finds every file
// elsewhere that names its tables and requires the files found to be
// exactly the owner's list of those still outside, each there for a
// reason the owner's package comment gives.
package sqlowner

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Find returns the Go and SQL files under root, tests excepted, whose
// code names reports on: their paths relative to root, with forward
// slashes. It passes over hidden directories, testdata (tests' fixtures)
// and the directories skip lists, relative to root.
func Find(root string, names func(rel string, code []byte) bool, skip ...string) ([]string, error) {
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." || d.Name() == "testdata" || slices.Contains(skip, rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, "_test.go") || !(strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, ".sql")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if names(rel, b) {
			found = append(found, rel)
		}
		return nil
	})
	return found, err
}

// RequireExactly fails t unless found and outside list the same files. A
// file found and not listed names the tables from elsewhere: its
// statement belongs in owner. A file listed and not found no longer
// names them, and its entry must go, so that the list cannot rot.
func RequireExactly(t testing.TB, found, outside []string, tables, owner string) {
	t.Helper()
	for _, f := range found {
		if !slices.Contains(outside, f) {
			t.Fatalf("%s names %s: move the statement into %s, or list the file in its package comment and its test's outside, with why", f, tables, owner)
		}
	}
	for _, f := range outside {
		if !slices.Contains(found, f) {
			t.Fatalf("%s no longer names %s: take it off the outside list and %s's package comment", f, tables, owner)
		}
	}
}
