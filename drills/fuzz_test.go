package drills

import (
	"os/exec"
	"strings"
	"testing"
)

// TestFuzzVerify runs drills/fuzz.sh (the long form only): every fuzz
// target of the verify package for 60 s. A crasher is written to
// verify/testdata/fuzz and becomes a seed-corpus regression test.
func TestFuzzVerify(t *testing.T) {
	if !*longForm {
		t.Skip("long form only (-drills.long); or run drills/fuzz.sh")
	}
	cmd := exec.Command("bash", "fuzz.sh")
	cmd.Env = append(cmd.Environ(), "FUZZTIME=60s", "FUZZ_JOBS=2")
	out, err := cmd.CombinedOutput()
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		t.Log(line)
	}
	if err != nil {
		t.Fatalf("fuzz.sh: %v", err)
	}
}
