package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Duration is a time.Duration read from YAML as "300ms", "5m", "72h" or
// "30d" (days: retention settings are naturally spoken of in days).
type Duration time.Duration

// maxDays is the most days a time.Duration holds (about 292 years).
const maxDays = int64(math.MaxInt64 / (24 * time.Hour))

// ParseDuration parses Go duration syntax plus a whole-number "d" suffix.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 64)
		if err != nil || n < 0 || n > maxDays {
			return 0, fmt.Errorf("invalid duration %q (want e.g. 30s, 5m, 72h or 30d)", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil // n ≤ maxDays: no overflow
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid duration %q (want e.g. 30s, 5m, 72h or 30d)", s)
	}
	return d, nil
}

func (d *Duration) UnmarshalYAML(node *yaml.Node) error {
	var s string
	if err := node.Decode(&s); err != nil {
		return err
	}
	v, err := ParseDuration(s)
	if err != nil {
		return &valueError{line: node.Line, column: node.Column, msg: err.Error()}
	}
	*d = Duration(v)
	return nil
}

func (d Duration) Std() time.Duration { return time.Duration(d) }
