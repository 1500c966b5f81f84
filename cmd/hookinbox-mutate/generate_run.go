package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// genOutcome is what a mutant's run found. A mutant that does not compile,
// or whose SQL PostgreSQL refuses as malformed, is invalid: it says
// nothing about the tests.
type genOutcome string

const (
	genKilled   genOutcome = "killed"
	genSurvived genOutcome = "survived"
	genInvalid  genOutcome = "invalid"
)

// sqlMalformed is a class 42 SQLSTATE (syntax error, undefined column or
// function, wrong type): a mutant the database refused to run.
var sqlMalformed = regexp.MustCompile(`SQLSTATE 42[0-9A-Z]{3}`)

// runGenerated generates the mutants of each row -row selects, runs up to
// -n of them against the row's tests and prints what each did. Survivors
// are for a person to judge, so it exits 0 when every mutant ran.
func runGenerated(ctx context.Context, o options, root, module string) (int, error) {
	rows, err := rowsMatching(mutations, o.row)
	if err != nil {
		return 2, err
	}
	type plan struct {
		r   row
		ms  []Mutant
		src map[string]string
		all int
	}
	var plans []plan
	for _, r := range rows {
		p := plan{r: r, src: map[string]string{}}
		var all []Mutant
		for _, f := range r.files {
			b, err := os.ReadFile(filepath.Join(root, f))
			if err != nil {
				return 2, err
			}
			ms, err := generate(f, string(b))
			if err != nil {
				return 2, fmt.Errorf("%s: %w", f, err)
			}
			p.src[f] = string(b)
			all = append(all, ms...)
		}
		p.all, p.ms = len(all), pick(all, o.n, o.seed)
		plans = append(plans, p)
	}
	if o.list {
		for _, p := range plans {
			fmt.Printf("row %q: %d of %d mutants in %s\n", p.r.promise, len(p.ms), p.all, strings.Join(p.r.files, " "))
			for _, m := range p.ms {
				before, after := m.diff(p.src[m.File])
				fmt.Printf("  %s\n    - %s\n    + %s\n", m, before, after)
			}
		}
		return 0, nil
	}

	start := time.Now()
	s, err := newScratch(root, o.dir)
	if err != nil {
		return 2, err
	}
	defer s.close(o.keep)
	fmt.Printf("scratch copy %s (%s)\n", s.dir, round(time.Since(start)))
	for _, p := range plans {
		fmt.Printf("\nrow %q: %d of %d mutants in %s (seed %d)\n", p.r.promise, len(p.ms), p.all, strings.Join(p.r.files, " "), o.seed)
		if err := checkTests(ctx, o, []string{s.dir}, module, p.r.ms); err != nil {
			return 2, err
		}
		var tally [3]int // killed, survived, invalid
		var survivors []string
		for i, m := range p.ms {
			if ctx.Err() != nil {
				return 2, ctx.Err()
			}
			mstart := time.Now()
			out, by := runMutant(ctx, s, m, p.r, o.timeout)
			before, after := m.diff(p.src[m.File])
			fmt.Printf("mutant %2d/%d %-8s %s  %s\n  - %s\n  + %s\n", i+1, len(p.ms), out, m, round(time.Since(mstart)), before, after)
			if by != "" {
				fmt.Printf("  %s\n", by)
			}
			switch out {
			case genKilled:
				tally[0]++
			case genSurvived:
				tally[1]++
				survivors = append(survivors, fmt.Sprintf("%s\n  - %s\n  + %s", m, before, after))
			default:
				tally[2]++
			}
		}
		rate := "n/a"
		if tally[0]+tally[1] > 0 {
			rate = fmt.Sprintf("%.0f%%", 100*float64(tally[0])/float64(tally[0]+tally[1]))
		}
		fmt.Printf("\nrow %q\nmutants %d, killed %d, survived %d, invalid %d, kill rate %s\n",
			p.r.promise, len(p.ms), tally[0], tally[1], tally[2], rate)
		if len(survivors) > 0 {
			fmt.Printf("survivors (each equivalent, or a gap in the tests):\n%s\n", strings.Join(survivors, "\n"))
		}
	}
	fmt.Printf("\ntotal %s\n", round(time.Since(start)))
	return 0, nil
}

// runMutant applies m to the copy, builds its package when it is Go,
// runs the row's tests one package at a time until one kills it, and
// restores the file. by says which tests killed it, or why it is invalid.
func runMutant(ctx context.Context, s *scratch, m Mutant, r row, timeout time.Duration) (out genOutcome, by string) {
	restore, err := s.edit(m.File, m.apply)
	if err != nil {
		return genInvalid, err.Error()
	}
	defer func() {
		if err := restore(); err != nil {
			panic(fmt.Sprintf("restoring %s in the scratch copy: %v", m.File, err))
		}
	}()
	if err := buildMutated(ctx, s.dir, m.File); err != nil {
		return genInvalid, "does not compile"
	}
	pkgs, runs := r.tests()
	for _, p := range pkgs {
		tr := goTest(ctx, s.dir, runs[p], []string{p}, timeout)
		v, err := tr.verdict()
		switch {
		case v == outcomeBroken:
			return genInvalid, firstLine(err.Error())
		case v == outcomeKilled:
			keys := tr.failed()
			if len(keys) == 0 { // a panic or a timeout outside any test
				for _, pkg := range tr.pkgFailed {
					keys = append(keys, testKey(pkg, ""))
				}
			}
			if strings.HasSuffix(m.File, ".sql") && malformedSQL(tr, keys) {
				return genInvalid, "PostgreSQL refused the statement (SQLSTATE 42…)"
			}
			return genKilled, "by " + shortNames(keys)
		}
	}
	return genSurvived, ""
}

// malformedSQL reports whether the output of the failed tests names a
// class 42 SQLSTATE.
func malformedSQL(tr *testRun, keys []string) bool {
	for _, k := range keys {
		if b := tr.output[k]; b != nil && sqlMalformed.Match(b.Bytes()) {
			return true
		}
	}
	return false
}
