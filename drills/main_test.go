package drills

import (
	"context"
	"flag"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var longForm = flag.Bool("drills.long", false, "run the long form of the drills (bigger loads, more faults, fuzzing)")

// pick returns short in the short form and long in the long form.
func pick[T any](short, long T) T {
	if *longForm {
		return long
	}
	return short
}

var (
	// hookinboxBin is the binary every drill runs, built once per test binary.
	hookinboxBin string
	// sharedPG serves the drills that do not stop their database; each gets
	// its own database on it.
	sharedPG *pgCluster
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "hookinbox-drills-bin-")
	if err != nil {
		log.Printf("drills: %v", err)
		return 1
	}
	defer os.RemoveAll(dir)
	hookinboxBin = filepath.Join(dir, "hookinbox")
	build := exec.Command("go", "build", "-o", hookinboxBin, "./cmd/hookinbox")
	build.Dir = ".." // the module root
	if out, err := build.CombinedOutput(); err != nil {
		log.Printf("drills: building hookinbox: %v\n%s", err, out)
		return 1
	}

	sharedPG, err = newPGCluster(context.Background(), 0)
	if err != nil {
		log.Printf("drills: %v", err)
		return 1
	}
	defer sharedPG.destroy()
	return m.Run()
}
