package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// profileTopN is how many functions a profile's summary keeps, by flat
// and by cumulative time.
const profileTopN = 25

// profileTop is a CPU profile's heaviest functions, read with `go tool
// pprof -top`, kept in the results so that a report reads without the
// profile.
type profileTop struct {
	// SampleSeconds is the profile's total samples, in CPU seconds.
	SampleSeconds float64       `json:"sample_seconds"`
	Flat          []profileFunc `json:"flat"`
	Cum           []profileFunc `json:"cum"`
}

// profileFunc is one function's CPU seconds: in it (flat), and in it and
// what it called (cum).
type profileFunc struct {
	Name  string  `json:"name"`
	FlatS float64 `json:"flat_s"`
	CumS  float64 `json:"cum_s"`
}

// readProfileTop runs `go tool pprof -top` on a CPU profile, sorted by
// flat and by cumulative time, n functions each.
func readProfileTop(ctx context.Context, path string, n int) (*profileTop, error) {
	var top profileTop
	for _, cum := range []bool{false, true} {
		args := []string{"tool", "pprof", "-top", fmt.Sprintf("-nodecount=%d", n)}
		if cum {
			args = append(args, "-cum")
		}
		out, err := exec.CommandContext(ctx, "go", append(args, path)...).Output()
		if err != nil {
			return nil, fmt.Errorf("go tool pprof -top %s: %w", path, err)
		}
		total, funcs, err := parsePprofTop(string(out))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		top.SampleSeconds = total
		if cum {
			top.Cum = funcs
		} else {
			top.Flat = funcs
		}
	}
	return &top, nil
}

var (
	pprofTotalRe = regexp.MustCompile(`Total samples = (\S+)`)
	// pprofRowRe is a row of -top: flat, flat%, sum%, cum, cum%, name.
	pprofRowRe = regexp.MustCompile(`^\s*(\S+)\s+\S+%\s+\S+%\s+(\S+)\s+\S+%\s+(.+)$`)
)

// parsePprofTop reads the text of `go tool pprof -top`: the total samples
// and each row's function with its flat and cumulative seconds.
func parsePprofTop(text string) (float64, []profileFunc, error) {
	m := pprofTotalRe.FindStringSubmatch(text)
	if m == nil {
		return 0, nil, fmt.Errorf("pprof -top: no total samples in %q", firstLine(text))
	}
	total, err := pprofSeconds(m[1])
	if err != nil {
		return 0, nil, err
	}
	var funcs []profileFunc
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		row := pprofRowRe.FindStringSubmatch(sc.Text())
		if row == nil || row[1] == "flat" {
			continue
		}
		flat, err := pprofSeconds(row[1])
		if err != nil {
			return 0, nil, err
		}
		cum, err := pprofSeconds(row[2])
		if err != nil {
			return 0, nil, err
		}
		funcs = append(funcs, profileFunc{Name: strings.TrimSpace(row[3]), FlatS: flat, CumS: cum})
	}
	return total, funcs, nil
}

// pprofUnits are the time units pprof prints, in seconds.
var pprofUnits = []struct {
	suffix  string
	seconds float64
}{{"mins", 60}, {"hrs", 3600}, {"ms", 1e-3}, {"us", 1e-6}, {"µs", 1e-6}, {"ns", 1e-9}, {"s", 1}}

// pprofSeconds reads a duration as pprof prints it ("0", "750ms",
// "1.25s", "2.10mins").
func pprofSeconds(s string) (float64, error) {
	if s == "0" {
		return 0, nil
	}
	for _, u := range pprofUnits {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, fmt.Errorf("pprof time %q: %w", s, err)
			}
			return f * u.seconds, nil
		}
	}
	return 0, fmt.Errorf("pprof time %q: unknown unit", s)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
