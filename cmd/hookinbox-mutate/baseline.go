package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// baseline runs every test the mutations name once, unmutated, one go test
// per package with the mutations' regexes joined, as many packages at once
// as there are copies in dirs. Every test must pass:
// a test that always fails would "kill" any mutation. It also finds the
// mutations whose regex matches no test, a table rotting as tests are
// renamed.
func baseline(ctx context.Context, dirs []string, module string, ms []Mutation, timeout time.Duration) (*testRun, error) {
	runs, pkgs := runsByPackage(ms)
	all := &testRun{results: map[string]string{}}
	var (
		errs []error
		mu   sync.Mutex
	)
	eachPackage(dirs, pkgs, func(dir, p string) {
		r := goTest(ctx, dir, runs[p], []string{p}, timeout)
		mu.Lock()
		fmt.Printf("baseline %-28s %3d tests  %s\n", p, len(r.results), round(r.elapsed))
		if _, err := r.verdict(); err != nil || len(r.failed()) > 0 || len(r.pkgFailed) > 0 {
			errs = append(errs, fmt.Errorf("baseline %s fails unmutated: %v %v %v", p, r.failed(), r.pkgFailed, err))
			// The failing tests' own output: a baseline failure is a
			// flaky or broken test, and its message is the only clue.
			r.writeOutput(os.Stdout, r.failed())
			for _, pkg := range r.pkgFailed {
				r.writeOutput(os.Stdout, []string{testKey(pkg, "")})
			}
		}
		for k, v := range r.results {
			all.results[k] = v
		}
		mu.Unlock()
	})
	errs = append(errs, unmatched(all, module, ms)...)
	return all, errors.Join(errs...)
}

// runsByPackage joins the run regexes of ms by package, for one go test
// per package, and lists the packages in order.
func runsByPackage(ms []Mutation) (map[string]string, []string) {
	byPkg := map[string][]string{}
	for _, m := range ms {
		for _, p := range m.Pkgs {
			byPkg[p] = append(byPkg[p], "(?:"+m.Run+")")
		}
	}
	runs := make(map[string]string, len(byPkg))
	pkgs := make([]string, 0, len(byPkg))
	for p, rs := range byPkg {
		runs[p] = strings.Join(dedupe(rs), "|")
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	return runs, pkgs
}

// unmatched names each mutation of ms whose regex selects none of the
// tests in b: it would survive without a test having run.
func unmatched(b *testRun, module string, ms []Mutation) []error {
	var errs []error
	for _, m := range ms {
		if len(matched(b, module, m)) == 0 {
			errs = append(errs, fmt.Errorf("mutation %s: -run %q matches no test in %v", m.Name, m.Run, m.Pkgs))
		}
	}
	return errs
}

// matched lists the baseline's top-level tests that m's run selects.
func matched(b *testRun, module string, m Mutation) []string {
	re := regexp.MustCompile(m.Run)
	var out []string
	for _, p := range m.Pkgs {
		ip := importPath(module, p)
		for k := range b.results {
			pkg, test, _ := strings.Cut(k, " ")
			if pkg == ip && re.MatchString(test) {
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// importPath turns "./ingest" into the package's import path.
func importPath(module, pkg string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, "."), "/")
	if rel == "" {
		return module
	}
	return module + "/" + rel
}

func dedupe(ss []string) []string {
	sort.Strings(ss)
	out := ss[:0]
	for i, s := range ss {
		if i == 0 || s != ss[i-1] {
			out = append(out, s)
		}
	}
	return out
}

func round(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }

// eachPackage runs fn for every package, one package at a time in each
// of dirs (the scratch copies), so that no two go test runs share a copy.
func eachPackage(dirs, pkgs []string, fn func(dir, pkg string)) {
	var wg sync.WaitGroup
	next := make(chan string)
	for _, dir := range dirs {
		wg.Go(func() {
			for p := range next {
				fn(dir, p)
			}
		})
	}
	for _, p := range pkgs {
		next <- p
	}
	close(next)
	wg.Wait()
}
