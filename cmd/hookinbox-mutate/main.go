// Command hookinbox-mutate checks that the tests defend the promises the
// README and docs/ make. Each mutation in its table (mutations_*.go, joined
// in mutations.go) breaks one promise in a scratch copy of the tree; the
// tests mapped to it must then fail. It prints a table of what was killed
// and what survived, and exits 1 if a mutation survived or no longer
// applies. docs/guarantees.md lists the promises, their tests and their
// mutations.
//
// With -generate it runs, on demand, mutants that no one chose: made by
// rule (swapped operators, dropped statements, changed constants, dropped
// row locks) in the files a row's table mutations change, and judged by
// that row's tests (generate.go).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

type options struct {
	run      string
	list     bool
	keep     bool
	verbose  bool
	dir      string
	timeout  time.Duration
	parallel int

	skipBaseline bool

	generate bool
	row      string
	n        int
	seed     uint64
}

func main() {
	var o options
	flag.StringVar(&o.run, "run", "", "run only the mutations whose name matches this regex")
	flag.BoolVar(&o.list, "list", false, "print the table and whether each mutation applies, without running tests")
	flag.BoolVar(&o.keep, "keep", false, "keep the scratch copy after the run")
	flag.BoolVar(&o.verbose, "v", false, "show the test output of survivors")
	flag.StringVar(&o.dir, "dir", filepath.Join(os.TempDir(), "hookinbox-mutate"), "the scratch copy's directory")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "go test -timeout for each run (with -generate, defaults to 3m: a mutant that hangs a test is killed by the timeout)")
	flag.IntVar(&o.parallel, "parallel", 2, "how many mutations run at once, each in a scratch copy of its own (-dir, then -dir with -2, -3, … appended)")
	flag.BoolVar(&o.skipBaseline, "skip-baseline", false, "do not run the named tests unmutated first, for when they have just passed (CI runs go test ./... before); go test -list still checks that each mutation's -run selects a test")
	flag.BoolVar(&o.generate, "generate", false, "run generated mutants of the rows -row selects instead of the table; exits 0 whatever survives")
	flag.StringVar(&o.row, "row", "", "with -generate: the rows (promises of docs/guarantees.md) whose files are mutated, a regex; required")
	flag.IntVar(&o.n, "n", 20, "with -generate: the most mutants run per row")
	flag.Uint64Var(&o.seed, "seed", 1, "with -generate: which mutants are picked; the same seed picks the same ones")
	flag.Parse()
	if o.generate && !flagSet("timeout") {
		o.timeout = 3 * time.Minute
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code, err := run(ctx, o)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "hookinbox-mutate:", err)
	}
	os.Exit(code)
}

func run(ctx context.Context, o options) (int, error) {
	root, module, err := moduleRoot()
	if err != nil {
		return 2, err
	}
	if err := validate(mutations); err != nil {
		return 2, err
	}
	if o.generate {
		if o.row == "" {
			return 2, errors.New("-generate needs -row")
		}
		return runGenerated(ctx, o, root, module)
	}
	ms, err := selectMutations(mutations, o.run)
	if err != nil {
		return 2, err
	}
	// Every anchor is checked before anything runs, so a table that no
	// longer matches the code fails in seconds, naming each mutation.
	var anchorErrs []error
	for _, m := range ms {
		if err := m.check(root); err != nil {
			anchorErrs = append(anchorErrs, err)
		}
	}
	if o.list {
		printList(os.Stdout, ms, root)
		if len(anchorErrs) > 0 {
			return 2, errors.Join(anchorErrs...)
		}
		return 0, nil
	}
	if len(anchorErrs) > 0 {
		return 2, errors.Join(anchorErrs...)
	}
	return runAll(ctx, o, root, module, ms)
}

func runAll(ctx context.Context, o options, root, module string, ms []Mutation) (int, error) {
	start := time.Now()
	copies, err := newScratches(root, o.dir, o.parallel)
	if err != nil {
		return 2, err
	}
	defer func() {
		for _, s := range copies {
			s.close(o.keep)
		}
	}()
	fmt.Printf("%d scratch copies under %s (%s)\n", len(copies), o.dir, round(time.Since(start)))
	stopDB, err := sharedDatabase(ctx)
	if err != nil {
		return 2, err
	}
	defer stopDB()
	dirs := make([]string, len(copies))
	for i, c := range copies {
		dirs[i] = c.dir
	}
	if err := checkTests(ctx, o, dirs, module, ms); err != nil {
		return 2, err
	}
	results := runEach(ctx, copies, ms, o)
	if ctx.Err() != nil {
		return 2, ctx.Err()
	}
	fmt.Println()
	printTable(os.Stdout, results)
	fmt.Printf("\ntotal %s\n", round(time.Since(start)))
	return summary(results), nil
}

// checkTests runs the baseline, or with -skip-baseline only checks that
// each mutation's regex selects a test.
func checkTests(ctx context.Context, o options, dirs []string, module string, ms []Mutation) error {
	if o.skipBaseline {
		return listCheck(ctx, dirs, module, ms)
	}
	_, err := baseline(ctx, dirs, module, ms, o.timeout)
	return err
}

// runEach runs ms on the copies, one mutation per copy at a time, and
// returns the results in ms's order; each is printed as it ends.
func runEach(ctx context.Context, copies []*scratch, ms []Mutation, o options) []result {
	results := make([]result, len(ms))
	next := make(chan int)
	var print sync.Mutex
	var wg sync.WaitGroup
	for _, s := range copies {
		wg.Go(func() {
			for i := range next {
				r := runOne(ctx, s, ms[i], o.timeout)
				print.Lock()
				fmt.Println(r.line())
				if o.verbose && r.outcome == outcomeSurvived && r.run != nil {
					r.run.writeOutput(os.Stdout, r.run.with("pass"))
				}
				print.Unlock()
				results[i] = r
			}
		})
	}
	for i := range ms {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

// flagSet reports whether the command line gave the flag.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// moduleRoot finds go.mod from the working directory up, and the module's
// path.
func moduleRoot() (string, string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if mod, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
					return dir, strings.TrimSpace(mod), nil
				}
			}
			return "", "", fmt.Errorf("%s/go.mod names no module", dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", errors.New("no go.mod here or above: run from inside the module")
		}
		dir = parent
	}
}

func selectMutations(ms []Mutation, pattern string) ([]Mutation, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("-run: %w", err)
	}
	var out []Mutation
	for _, m := range ms {
		if re.MatchString(m.Name) {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-run %q selects no mutation", pattern)
	}
	return out, nil
}
