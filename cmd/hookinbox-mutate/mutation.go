package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Mutation breaks one promise on purpose. The tests it names must fail
// while it is applied; a mutation they let pass is a promise no test
// defends.
type Mutation struct {
	// Name identifies the mutation in the table, in docs/guarantees.md and
	// for -run. Lower case words joined by dashes.
	Name string
	// Promise is the row of docs/guarantees.md the mutation breaks.
	Promise string
	// File is the file changed, relative to the module root.
	File string
	// Edits are applied in order. Each Find must occur exactly once in
	// the file as the edits before it left it: an anchor that no longer
	// matches is an error, never a silently skipped mutation.
	Edits []Edit
	// Pkgs are the packages whose tests must kill the mutation, as
	// go test takes them ("./ingest").
	Pkgs []string
	// Run is go test's -run regex selecting those tests. It may not
	// contain '/', so that the baseline can join the regexes of one
	// package into one run.
	Run string
}

// Edit replaces the one occurrence of Find with Replace.
type Edit struct {
	Find, Replace string
}

// errAnchor is a Find text that does not occur exactly once.
var errAnchor = errors.New("anchor not found exactly once")

// apply returns src with m's edits applied.
func (m Mutation) apply(src string) (string, error) {
	for i, e := range m.Edits {
		if n := strings.Count(src, e.Find); n != 1 {
			return "", fmt.Errorf("mutation %s: %s edit %d: %w (found %d times): %q",
				m.Name, m.File, i+1, errAnchor, n, firstLine(e.Find))
		}
		src = strings.Replace(src, e.Find, e.Replace, 1)
	}
	return src, nil
}

// check reports whether m applies to the tree at root, without changing it.
func (m Mutation) check(root string) error {
	b, err := os.ReadFile(filepath.Join(root, m.File))
	if err != nil {
		return fmt.Errorf("mutation %s: %w", m.Name, err)
	}
	_, err = m.apply(string(b))
	return err
}

// firstLine shortens an anchor for an error message.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

var namePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// validate checks the table itself: what a typo in it would break.
func validate(ms []Mutation) error {
	seen := map[string]bool{}
	var errs []error
	for _, m := range ms {
		switch {
		case !namePattern.MatchString(m.Name):
			errs = append(errs, fmt.Errorf("mutation %q: name must be lower-case words joined by dashes", m.Name))
		case seen[m.Name]:
			errs = append(errs, fmt.Errorf("mutation %s: name used twice", m.Name))
		case m.Promise == "" || m.File == "" || len(m.Edits) == 0 || len(m.Pkgs) == 0 || m.Run == "":
			errs = append(errs, fmt.Errorf("mutation %s: promise, file, edits, packages and run are all required", m.Name))
		case strings.Contains(m.Run, "/"):
			errs = append(errs, fmt.Errorf("mutation %s: run regex may not contain '/'", m.Name))
		}
		if _, err := regexp.Compile(m.Run); err != nil {
			errs = append(errs, fmt.Errorf("mutation %s: run: %w", m.Name, err))
		}
		seen[m.Name] = true
	}
	return errors.Join(errs...)
}
