package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"
)

// listCheck is what -skip-baseline keeps of the baseline: every
// mutation's regex must select a test, or the mutation would survive (or
// be "killed") without any test of its having run. It asks go test -list,
// one package at a time with the mutations' regexes joined, as many
// packages at once as there are copies in dirs. That builds each test
// binary, as the baseline did, so the copies' build cache is as warm for
// the mutations, and runs its TestMain, but no test. Whether the tests
// pass unmutated is left to whoever skips the baseline: CI has just run
// go test ./....
func listCheck(ctx context.Context, dirs []string, module string, ms []Mutation) error {
	runs, pkgs := runsByPackage(ms)
	all := &testRun{results: map[string]string{}}
	var (
		errs []error
		mu   sync.Mutex
	)
	eachPackage(dirs, pkgs, func(dir, p string) {
		start := time.Now()
		names, err := goTestList(ctx, dir, runs[p], p)
		mu.Lock()
		fmt.Printf("listed   %-28s %3d tests  %s\n", p, len(names), round(time.Since(start)))
		if err != nil {
			errs = append(errs, err)
		}
		for _, n := range names {
			all.results[testKey(importPath(module, p), n)] = "listed"
		}
		mu.Unlock()
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	errs = append(errs, unmatched(all, module, ms)...)
	return errors.Join(errs...)
}

// goTestList runs go test -list run in dir for pkg and returns the tests
// it lists.
func goTestList(ctx context.Context, dir, run, pkg string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-list", run, pkg)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go test -list %s: %w\n%s%s", pkg, err, out, stderr.Bytes())
	}
	return listedTests(out), nil
}

// listedTest is a line of go test -list naming something -run runs: a
// test, an example or a fuzz test's seed corpus. Benchmarks are listed
// too, but -run does not run them.
var listedTest = regexp.MustCompile(`^(Test|Example|Fuzz)[\p{L}\p{N}_]*$`)

// listedTests picks the names out of go test -list's output; the rest is
// its closing "ok" line and whatever a TestMain printed.
func listedTests(out []byte) []string {
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); listedTest.MatchString(line) {
			names = append(names, line)
		}
	}
	return names
}
