package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
)

// profileStage is a part of serve's work in a CPU profile: the samples
// whose stack holds one of its functions. Within names the stage a part
// is counted in too ("" for a stage).
type profileStage struct {
	Name    string  `json:"name"`
	Within  string  `json:"within,omitempty"`
	Seconds float64 `json:"seconds"`
}

// stageRule names the samples of a stage or a part by a function of
// their stacks (match), unless a function matches unless.
type stageRule struct {
	name, within  string
	match, unless *regexp.Regexp
}

// pathStages are a forwarded delivery's stages in serve, each sample in
// the first whose function is in its stack, and parts of them, a sample
// in any part it holds. What no stage holds is "other".
var pathStages = []stageRule{
	{name: "ingest: requests (read, verify, answer)", match: regexp.MustCompile(`^github\.com/valyala/fasthttp\.\(\*Server\)\.serveConn$`)},
	{name: "verify the signature", within: "ingest: requests (read, verify, answer)", match: regexp.MustCompile(`^github\.com/hookinbox/hookinbox/verify\.VerifyRequest$`)},
	{name: "ingest: batch commits", match: regexp.MustCompile(`^github\.com/hookinbox/hookinbox/ingest\.\(\*batcher\)\.run$`)},
	{name: "River's job insert, carrying the COMMIT", within: "ingest: batch commits", match: regexp.MustCompile(`^github\.com/riverqueue/river\.\(\*Client\[.*\]\)\.InsertManyTx$`)},
	{name: "processing batches", match: regexp.MustCompile(`^github\.com/hookinbox/hookinbox/jobs\.\(\*processBatcher\)\.run$`)},
	{name: "load the payloads", within: "processing batches", match: regexp.MustCompile(`^github\.com/hookinbox/hookinbox/jobs\.loadPayloads$`)},
	{name: "go-github's typed event", within: "processing batches", match: regexp.MustCompile(`^github\.com/hookinbox/hookinbox/handlers\.\(\*Delivery\)\.parseGitHub$`)},
	{name: "GitHubFields", within: "processing batches", match: regexp.MustCompile(`^github\.com/hookinbox/hookinbox/handlers\.\(\*Delivery\)\.decodeGitHub$`)},
	{name: "completion (completeTx)", within: "processing batches", match: regexp.MustCompile(`^github\.com/hookinbox/hookinbox/jobs\.completeTx$`)},
	{name: "sender: cycles (record, claim)", match: regexp.MustCompile(`^github\.com/hookinbox/hookinbox/internal/destination\.\(\*sender\)\.run$`)},
	{name: "sender: requests", match: regexp.MustCompile(`^(github\.com/hookinbox/hookinbox/internal/destination\.\(\*sender\)\.make|net/http\.\(\*persistConn\)\.(readLoop|writeLoop))$`)},
	{name: "sign the request", within: "sender: requests", match: regexp.MustCompile(`\.\(\*Webhook\)\.Sign$`)},
	{name: "River: fetch, completion, notifications", match: regexp.MustCompile(`^github\.com/riverqueue/river[./]`),
		unless: regexp.MustCompile(`^github\.com/hookinbox/hookinbox/`)},
	{name: "GC (background)", match: regexp.MustCompile(`^runtime\.(gcBgMarkWorker|bgsweep|bgscavenge)$`)},
	{name: "scheduler, netpoll, timers", match: regexp.MustCompile(`^runtime\.(mcall|morestack|sysmon)$`)},
	{name: "allocation (in every stage)", within: "*", match: regexp.MustCompile(`^runtime\.mallocgc$`)},
}

// profileSample is one stack of a profile and its CPU seconds.
type profileSample struct {
	seconds float64
	frames  []string // leaf first
}

// readProfileStages runs `go tool pprof -traces` on a CPU profile and
// attributes its samples to rules.
func readProfileStages(ctx context.Context, path string, rules []stageRule) ([]profileStage, error) {
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-traces", path).Output()
	if err != nil {
		return nil, fmt.Errorf("go tool pprof -traces %s: %w", path, err)
	}
	samples, err := parsePprofTraces(string(out))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return attributeStages(samples, rules), nil
}

// parsePprofTraces reads `go tool pprof -traces`: blocks between dashed
// lines, the first line of each its value and leaf function, the next
// ones its callers. Label lines (a CPU profile of serve has none) are
// skipped.
func parsePprofTraces(text string) ([]profileSample, error) {
	var (
		samples []profileSample
		cur     *profileSample
	)
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "-----------+"):
			cur = nil
		case cur == nil && strings.HasPrefix(line, " ") && strings.TrimSpace(line) != "":
			value, fn, ok := strings.Cut(strings.TrimSpace(line), " ")
			if !ok {
				continue
			}
			secs, err := pprofSeconds(value)
			if err != nil {
				return nil, err
			}
			samples = append(samples, profileSample{seconds: secs, frames: []string{frameName(fn)}})
			cur = &samples[len(samples)-1]
		case cur != nil && strings.HasPrefix(line, "  ") && !strings.Contains(line, ":"):
			cur.frames = append(cur.frames, frameName(line))
		}
	}
	return samples, sc.Err()
}

// frameName is a function's name without pprof's " (inline)" mark.
func frameName(s string) string {
	return strings.TrimSuffix(strings.TrimSpace(s), " (inline)")
}

// attributeStages sums the samples by rule: each sample in the first
// stage whose function is in its stack, and in every part it holds;
// "other" gets the samples no stage holds. A part within "*" counts in
// every stage.
func attributeStages(samples []profileSample, rules []stageRule) []profileStage {
	out := make([]profileStage, len(rules))
	for i, r := range rules {
		out[i] = profileStage{Name: r.name, Within: r.within}
	}
	var other float64
	for _, s := range samples {
		staged := false
		for i, r := range rules {
			if r.within == "" && staged || !r.matches(s.frames) {
				continue
			}
			out[i].Seconds += s.seconds
			if r.within == "" {
				staged = true
			}
		}
		if !staged {
			other += s.seconds
		}
	}
	return append(out, profileStage{Name: "other", Seconds: other})
}

func (r stageRule) matches(frames []string) bool {
	found := false
	for _, f := range frames {
		if r.unless != nil && r.unless.MatchString(f) {
			return false
		}
		found = found || r.match.MatchString(f)
	}
	return found
}
