package hookinbox_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The README's shell blocks run as written. Each ```sh block is preceded
// by a directive saying what the test does with it:
//
//	<!-- test: run -->                      run it; it must succeed
//	<!-- test: start NAME until CMD -->     run it in the background (it
//	                                        is a foreground command, as
//	                                        in its own terminal) until CMD
//	                                        succeeds
//	<!-- test: skip REASON -->              do not run it
//
// and directives without a block stand for what the reader does by hand:
//
//	<!-- test: stop NAME -->                Ctrl-C in NAME's terminal
//	<!-- test: expect NAME TEXT -->         NAME's output shows TEXT
//	<!-- test: start NAME "CMD" until CMD --> a step the text asks for
//
// The script runs in a copy of this checkout, in a network namespace of its
// own: the README's ports (8080, 8081, 9090, 9100) are free there, and the
// commands need no change. A ```sh block without a directive fails the
// test, so a new command cannot dodge it.
func TestREADMECommandsRun(t *testing.T) {
	t.Parallel()
	if err := exec.Command("unshare", "--net", "true").Run(); err != nil {
		if os.Getenv("HOOKINBOX_REQUIRE_NETNS") != "" {
			t.Fatalf("unshare --net: %v (the test needs a network namespace: run as root)", err)
		}
		t.Skipf("no network namespace (unshare --net: %v); run as root", err)
	}
	script := readmeScript(t)

	dir, err := os.MkdirTemp("", "hookinbox-readme-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755)) // the embedded PostgreSQL's user reaches it
	copyCheckout(t, dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "readme.sh"), []byte(script), 0o755))

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "--net", "bash", "readme.sh")
	cmd.Dir = dir
	// Offline, as the namespace is: everything comes from the module and
	// build caches.
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "README commands failed:\n%s\n--- script ---\n%s", out, script)
	t.Logf("%s", out)
}

var directiveRE = regexp.MustCompile(`^<!-- test: (\w+)\s*(.*?)\s*-->$`)

// readmeScript turns the README's blocks and directives into one bash
// script.
func readmeScript(t *testing.T) string {
	t.Helper()
	f, err := os.Open("README.md")
	require.NoError(t, err)
	defer f.Close()
	var b strings.Builder
	// set -m: each background job gets a process group of its own, so a
	// stop reaches all of it (go run and the program it runs), as Ctrl-C
	// in its terminal would.
	b.WriteString(`set -meo pipefail
ip link set lo up
logs=$(mktemp -d)
__wait() { # name, command: poll command for up to 90 s
  for i in $(seq 1 450); do
    if bash -c "$2" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  echo "readme: $1 never got ready ($2); its output:"; cat "$logs/$1.log"; return 1
}
__stop() {
  local pid=$(cat "$logs/$1.pid")
  kill -INT -- -"$pid" 2>/dev/null || true
  for i in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
  echo "readme: $1 did not stop"; cat "$logs/$1.log"; return 1
}
__expect() { # name, text
  for i in $(seq 1 150); do grep -qF -- "$2" "$logs/$1.log" && return 0; sleep 0.2; done
  echo "readme: $1's output never showed $2:"; cat "$logs/$1.log"; return 1
}
`)
	sc := bufio.NewScanner(f)
	var (
		pending []string // the directive awaiting its block
		line    int
		blocks  int
	)
	for sc.Scan() {
		line++
		text := sc.Text()
		if m := directiveRE.FindStringSubmatch(text); m != nil {
			switch m[1] {
			case "stop":
				fmt.Fprintf(&b, "__stop %s\n", m[2])
			case "expect":
				name, what, _ := strings.Cut(m[2], " ")
				fmt.Fprintf(&b, "__expect %s %q\n", name, what)
			case "start":
				if cmd, rest, ok := parseQuotedStart(m[2]); ok {
					fmt.Fprintf(&b, "( %s ) >\"$logs/%s.log\" 2>&1 &\necho $! >\"$logs/%s.pid\"\n__wait %s %q\n",
						cmd, rest[0], rest[0], rest[0], rest[1])
					continue
				}
				pending = m[1:]
			default:
				pending = m[1:]
			}
			continue
		}
		if text != "```sh" {
			continue
		}
		blocks++
		var body []string
		for sc.Scan() {
			line++
			if sc.Text() == "```" {
				break
			}
			body = append(body, sc.Text())
		}
		require.NotNil(t, pending, "README.md line %d: a ```sh block without a <!-- test: … --> directive", line)
		code := strings.Join(body, "\n")
		switch pending[0] {
		case "run":
			fmt.Fprintf(&b, "echo '== README line %d'\n%s\n", line, code)
		case "skip":
		case "start":
			name, until, ok := strings.Cut(pending[1], " until ")
			require.True(t, ok, "README.md line %d: start NAME until CMD", line)
			fmt.Fprintf(&b, "echo '== README line %d (%s, in the background)'\n( %s ) >\"$logs/%s.log\" 2>&1 &\necho $! >\"$logs/%s.pid\"\n__wait %s %q\n",
				line, name, code, name, name, name, until)
		default:
			t.Fatalf("README.md line %d: unknown directive %q", line, pending[0])
		}
		pending = nil
	}
	require.NoError(t, sc.Err())
	require.Greater(t, blocks, 10, "the README's shell blocks were found")
	b.WriteString("echo '== README commands all ran'\n")
	return b.String()
}

// parseQuotedStart reads `NAME "CMD" until UNTIL`, a start without a
// block; it returns CMD and [NAME, UNTIL].
func parseQuotedStart(s string) (string, []string, bool) {
	name, rest, ok := strings.Cut(s, ` "`)
	if !ok {
		return "", nil, false
	}
	cmd, until, ok := strings.Cut(rest, `" until `)
	if !ok {
		return "", nil, false
	}
	return cmd, []string{name, until}, true
}

// copyCheckout copies the files git knows (tracked, or new and not
// ignored) into dir.
func copyCheckout(t *testing.T, dir string) {
	t.Helper()
	out, err := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	require.NoError(t, err, "git ls-files")
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		data, err := os.ReadFile(name)
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		require.NoError(t, err)
		info, err := os.Stat(name)
		require.NoError(t, err)
		dst := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		require.NoError(t, os.WriteFile(dst, data, info.Mode().Perm()))
	}
}
