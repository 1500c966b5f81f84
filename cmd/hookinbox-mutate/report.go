package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path"
	"strings"
	"text/tabwriter"
	"time"
)

type outcome string

const (
	outcomeKilled   outcome = "killed"
	outcomeSurvived outcome = "survived"
	// outcomeBroken: the mutation did not compile or go test failed
	// without a test failing. A mutation must compile, or it proves
	// nothing about the tests.
	outcomeBroken outcome = "broken"
)

type result struct {
	m       Mutation
	outcome outcome
	by      []string // the tests that failed
	note    string
	elapsed time.Duration
	err     error
	run     *testRun
}

// runOne applies m to the copy, builds the changed package, runs m's
// tests and restores the file.
func runOne(ctx context.Context, s *scratch, m Mutation, timeout time.Duration) result {
	start := time.Now()
	res := result{m: m, outcome: outcomeBroken}
	restore, err := s.mutate(m)
	if err != nil {
		res.err = err
		return res
	}
	defer func() {
		if err := restore(); err != nil {
			panic(fmt.Sprintf("restoring %s in the scratch copy: %v", m.File, err))
		}
	}()
	if err := buildMutated(ctx, s.dir, m.File); err != nil {
		res.err, res.elapsed = err, time.Since(start)
		return res
	}
	r := goTest(ctx, s.dir, m.Run, m.Pkgs, timeout)
	res.run, res.elapsed = r, time.Since(start)
	res.outcome, res.err = r.verdict()
	res.by = r.failed()
	if len(res.by) == 0 {
		res.by = r.pkgFailed
	}
	if res.outcome == outcomeSurvived && len(r.with("pass")) == 0 {
		res.note = "every mapped test skipped"
	}
	return res
}

// buildMutated compiles the package of a mutated Go file. go test would
// report a compile error too, but not where a test builds the binary
// itself (the drills): there it would read as a kill.
func buildMutated(ctx context.Context, dir, file string) error {
	if !strings.HasSuffix(file, ".go") {
		return nil // only Go files fail to compile; embedded SQL fails at run time
	}
	build := exec.CommandContext(ctx, "go", "build", "./"+path.Dir(file))
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("does not compile: %v\n%s", err, out)
	}
	return nil
}

// line is the progress line printed as each mutation finishes.
func (r result) line() string {
	s := fmt.Sprintf("mutation %-40s %-8s %6s", r.m.Name, r.outcome, round(r.elapsed))
	if r.note != "" {
		s += "  (" + r.note + ")"
	}
	if r.err != nil {
		s += "\n  " + strings.ReplaceAll(r.err.Error(), "\n", "\n  ")
	}
	return s
}

func printTable(w io.Writer, rs []result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTATION\tRESULT\tTIME\tKILLED BY")
	for _, r := range rs {
		by := shortNames(r.by)
		if r.note != "" {
			by = r.note
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.m.Name, r.outcome, round(r.elapsed), by)
	}
	tw.Flush()
}

// shortNames drops the module path from "pkg Test" names.
func shortNames(keys []string) string {
	out := make([]string, len(keys))
	for i, k := range keys {
		pkg, test, _ := strings.Cut(k, " ")
		out[i] = strings.TrimSpace(path.Base(pkg) + " " + test)
	}
	return strings.Join(out, ", ")
}

// summary prints the final line and returns the exit code: 1 when a
// mutation survived or broke.
func summary(rs []result) int {
	var killed, survived, broken int
	for _, r := range rs {
		switch r.outcome {
		case outcomeKilled:
			killed++
		case outcomeSurvived:
			survived++
		default:
			broken++
		}
	}
	line := fmt.Sprintf("mutations: %d killed, %d survived", killed, survived)
	if broken > 0 {
		line += fmt.Sprintf(", %d broken", broken)
	}
	fmt.Println(line)
	if survived+broken > 0 {
		return 1
	}
	return 0
}

func printList(w io.Writer, ms []Mutation, root string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTATION\tAPPLIES\tFILE\tTESTS\tPROMISE")
	for _, m := range ms {
		applies := "yes"
		if err := m.check(root); err != nil {
			applies = "NO"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s -run '%s'\t%s\n", m.Name, applies, m.File, strings.Join(m.Pkgs, " "), m.Run, m.Promise)
	}
	tw.Flush()
}
