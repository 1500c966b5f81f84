package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"
)

// testEvent is one line of go test -json (go doc test2json).
type testEvent struct {
	Action      string
	Package     string
	ImportPath  string // build-output and build-fail events
	Test        string
	Output      string
	FailedBuild string
}

// testRun is what one go test run reported, by top-level test.
type testRun struct {
	results     map[string]string // "pkg Test" → run, pass, fail or skip
	output      map[string]*bytes.Buffer
	pkgFailed   []string // packages that failed outside any test (TestMain, a timeout)
	buildFailed bool
	buildOutput bytes.Buffer
	elapsed     time.Duration
	err         error // go test's own failure, when no test explains it
}

func testKey(pkg, test string) string { return pkg + " " + test }

// goTest runs go test in dir with the given -run regex over pkgs.
func goTest(ctx context.Context, dir, run string, pkgs []string, timeout time.Duration) *testRun {
	// -vet=off: a mutation is killed by a test, never by vet (CI runs go
	// vet on the tree as it is). -ldflags=-s -w: no symbol table or DWARF,
	// a shorter link of each mutated test binary. -failfast: one failed
	// test kills a mutation, so a package starts no test after it.
	args := append([]string{"test", "-count=1", "-json", "-vet=off", "-failfast", "-ldflags=-s -w", "-timeout", timeout.String(), "-run", run}, pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	r := &testRun{results: map[string]string{}, output: map[string]*bytes.Buffer{}}
	if err != nil {
		r.err = err
		return r
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		r.err = err
		return r
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		r.add(sc.Bytes())
	}
	err = cmd.Wait()
	r.elapsed = time.Since(start)
	r.buildOutput.Write(stderr.Bytes())
	if err != nil && len(r.failed()) == 0 && len(r.pkgFailed) == 0 && !r.buildFailed {
		r.err = fmt.Errorf("go test: %w\n%s", err, stderr.String())
	}
	return r
}

// add records one line of go test -json output.
func (r *testRun) add(line []byte) {
	var e testEvent
	if err := json.Unmarshal(line, &e); err != nil {
		r.buildOutput.Write(line) // not JSON: the go command's own output
		r.buildOutput.WriteByte('\n')
		return
	}
	switch {
	case e.Action == "build-output":
		r.buildOutput.WriteString(e.Output)
	case e.Action == "build-fail" || (e.Action == "fail" && e.FailedBuild != ""):
		r.buildFailed = true
	case e.Test == "":
		if e.Action == "fail" {
			r.pkgFailed = append(r.pkgFailed, e.Package)
		}
		r.outputOf(e.Package, "").WriteString(e.Output)
	default:
		top, _, _ := strings.Cut(e.Test, "/")
		r.outputOf(e.Package, top).WriteString(e.Output)
		if top == e.Test && e.Action != "output" && e.Action != "pause" && e.Action != "cont" {
			r.results[testKey(e.Package, e.Test)] = e.Action
		}
	}
}

func (r *testRun) outputOf(pkg, test string) *bytes.Buffer {
	k := testKey(pkg, test)
	if r.output[k] == nil {
		r.output[k] = &bytes.Buffer{}
	}
	return r.output[k]
}

// failed lists the failed top-level tests, "pkg Test", sorted.
func (r *testRun) failed() []string { return r.with("fail") }

func (r *testRun) with(action string) []string {
	var ks []string
	for k, a := range r.results {
		if a == action {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return ks
}

// verdict says what the run means for a mutation applied during it.
func (r *testRun) verdict() (outcome, error) {
	switch {
	case r.buildFailed:
		return outcomeBroken, errors.New("does not compile:\n" + r.buildOutput.String())
	case r.err != nil:
		return outcomeBroken, r.err
	case len(r.failed()) > 0 || len(r.pkgFailed) > 0:
		return outcomeKilled, nil
	}
	return outcomeSurvived, nil
}

// writeOutput copies the output of the tests named by keys to w.
func (r *testRun) writeOutput(w *os.File, keys []string) {
	for _, k := range keys {
		if b := r.output[k]; b != nil {
			w.Write(b.Bytes())
		}
	}
}
