package pgembed

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNoBinaries means no PostgreSQL server binaries (initdb, postgres) were
// found, so there is nothing to run a private server with.
var ErrNoBinaries = errors.New("pgembed: no PostgreSQL server binaries (initdb, postgres) found: " +
	"install PostgreSQL (e.g. `apt-get install postgresql`) or set DATABASE_URL")

// binDirPatterns are searched, in order, when pg_config does not lead to the
// server binaries. Debian/Ubuntu keep each major version in its own directory
// and do not put initdb on PATH; PGDG RPMs do the same under /usr/pgsql-N.
var binDirPatterns = []string{
	"/usr/lib/postgresql/*/bin",
	"/usr/pgsql-*/bin",
}

// FindBinDir returns the directory holding initdb and postgres: the output of
// `pg_config --bindir` if pg_config is on PATH and that directory has the
// server binaries, else the highest-version /usr/lib/postgresql/*/bin (then
// /usr/pgsql-*/bin) that has them, else the directory of an initdb on PATH
// (Fedora, Arch). It returns ErrNoBinaries when none is found.
func FindBinDir() (string, error) {
	if pgConfig, err := exec.LookPath("pg_config"); err == nil {
		// pg_config may come from a client-only package (libpq-dev) whose
		// bindir lacks the server, so its answer is checked, not trusted.
		if out, err := exec.Command(pgConfig, "--bindir").Output(); err == nil {
			if dir := strings.TrimSpace(string(out)); hasServerBinaries(dir) {
				return dir, nil
			}
		}
	}
	for _, pattern := range binDirPatterns {
		if dir := highestBinDir(pattern); dir != "" {
			return dir, nil
		}
	}
	if initdb, err := exec.LookPath("initdb"); err == nil {
		if dir := filepath.Dir(initdb); hasServerBinaries(dir) {
			return dir, nil
		}
	}
	return "", ErrNoBinaries
}

// highestBinDir returns the match of pattern (whose single * stands for a
// version, possibly behind a "name-" prefix) with the highest version that
// holds the server binaries, or "" if none does.
func highestBinDir(pattern string) string {
	matches, _ := filepath.Glob(pattern)
	var best string
	var bestVersion []int
	for _, dir := range matches {
		if !hasServerBinaries(dir) {
			continue
		}
		version := parseVersion(filepath.Base(filepath.Dir(dir)))
		if best == "" || compareVersions(version, bestVersion) > 0 {
			best, bestVersion = dir, version
		}
	}
	return best
}

// parseVersion turns "15", "9.6" or "pgsql-16" into its numeric parts.
func parseVersion(s string) []int {
	if i := strings.LastIndexByte(s, '-'); i >= 0 {
		s = s[i+1:]
	}
	var parts []int
	for field := range strings.SplitSeq(s, ".") {
		n, err := strconv.Atoi(field)
		if err != nil {
			return nil
		}
		parts = append(parts, n)
	}
	return parts
}

func compareVersions(a, b []int) int {
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y int
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			if x > y {
				return 1
			}
			return -1
		}
	}
	return 0
}

func hasServerBinaries(dir string) bool {
	if dir == "" {
		return false
	}
	for _, name := range []string{"initdb", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			return false
		}
	}
	return true
}
