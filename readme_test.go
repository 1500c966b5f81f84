package hookinbox_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/require"
)

// The shell blocks of the README and of every page in docs/ run as
// written. Each ```sh block is preceded by a directive saying what the
// test does with it:
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
// The pages run one after another, the README first, as a reader who
// finished its tours goes on to a page: in the same copy of this checkout
// (the binary the tour built, its database), each page in a shell of its
// own (what one page exports does not reach the next), and a page must
// stop what it started. They run in a network namespace of their own: the
// ports the pages use (8080, 8081, 9090, 9092, 9100, 4222) are free there,
// and the commands need no change. A ```sh block without a directive fails
// the test, so a new command cannot dodge it.
func TestDocsCommandsRun(t *testing.T) {
	t.Parallel()
	if err := exec.Command("unshare", "--net", "true").Run(); err != nil {
		if os.Getenv("HOOKINBOX_REQUIRE_NETNS") != "" {
			t.Fatalf("unshare --net: %v (the test needs a network namespace: run as root)", err)
		}
		t.Skipf("no network namespace (unshare --net: %v); run as root", err)
	}
	pages := docPages(t)
	scripts := make([]string, len(pages))
	blocks := 0
	for i, page := range pages {
		var n int
		scripts[i], n = pageScript(t, page)
		blocks += n
	}
	require.Greater(t, blocks, 10, "the pages' shell blocks were found")

	dir, err := os.MkdirTemp("", "hookinbox-readme-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755)) // the embedded PostgreSQL's user reaches it
	copyCheckout(t, dir)
	scriptDir, err := os.MkdirTemp("", "hookinbox-readme-scripts-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(scriptDir) })
	var run strings.Builder
	run.WriteString("set -eo pipefail\nip link set lo up\n")
	for i, page := range pages {
		name := filepath.Join(scriptDir, fmt.Sprintf("%02d.sh", i))
		require.NoError(t, os.WriteFile(name, []byte(scripts[i]), 0o755))
		fmt.Fprintf(&run, "echo '== %s'\nbash %q\n", page, name)
	}
	run.WriteString("echo '== commands of every page ran'\n")

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "--net", "bash", "-c", run.String())
	cmd.Dir = dir
	// Offline, as the namespace is: everything comes from the module and
	// build caches. What `hookinbox listen` keeps under the user's config
	// directory (its secret, its cursors) stays in the copy.
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOWORK=off", "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the pages' commands failed: %v\n%s\n--- scripts ---\n%s", err, out, strings.Join(scripts, "\n"))
	}
	t.Logf("%s", out)
}

// docPages returns README.md and the pages in docs/, in the order their
// commands run.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	slices.Sort(pages)
	return append([]string{"README.md"}, pages...)
}

var directiveRE = regexp.MustCompile(`^<!-- test: (\w+)\s*(.*?)\s*-->$`)

// pageScript turns a page's blocks and directives into one bash script,
// and counts its shell blocks.
func pageScript(t *testing.T, page string) (string, int) {
	t.Helper()
	f, err := os.Open(page)
	require.NoError(t, err)
	defer f.Close()
	var b strings.Builder
	// set -m: each background job gets a process group of its own, so a
	// stop reaches all of it (go run and the program it runs), as Ctrl-C
	// in its terminal would.
	b.WriteString(`set -meo pipefail
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
		require.NotNil(t, pending, "%s line %d: a ```sh block without a <!-- test: … --> directive", page, line)
		code := strings.Join(body, "\n")
		switch pending[0] {
		case "run":
			fmt.Fprintf(&b, "echo '== %s line %d'\n%s\n", page, line, code)
		case "skip":
		case "start":
			name, until, ok := strings.Cut(pending[1], " until ")
			require.True(t, ok, "%s line %d: start NAME until CMD", page, line)
			fmt.Fprintf(&b, "echo '== %s line %d (%s, in the background)'\n( %s ) >\"$logs/%s.log\" 2>&1 &\necho $! >\"$logs/%s.pid\"\n__wait %s %q\n",
				page, line, name, code, name, name, name, until)
		default:
			t.Fatalf("%s line %d: unknown directive %q", page, line, pending[0])
		}
		pending = nil
	}
	require.NoError(t, sc.Err())
	require.Nil(t, pending, "%s: a <!-- test: %s --> directive with no block after it", page, strings.Join(pending, " "))
	// What the page started in the background, it must have stopped: the
	// next page's ports and database are to be free.
	fmt.Fprintf(&b, "if [ -n \"$(jobs -rp)\" ]; then echo 'readme: %s left a process running:'; jobs -l; exit 1; fi\n", page)
	return b.String(), blocks
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

// Every relative link of the README and of docs/ reaches a file, and every
// #anchor a heading of its page, so that moving a section cannot leave a
// link behind.
func TestDocsLinksResolve(t *testing.T) {
	t.Parallel()
	linkRE := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	links := 0
	for _, page := range docPages(t) {
		text := withoutCode(readText(t, page))
		for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				_, err := os.Stat(path)
				require.NoError(t, err, "%s links to %s", page, target)
			}
			if anchor != "" {
				require.Contains(t, headingAnchors(readText(t, path)), anchor, "%s links to %s: no such heading", page, target)
			}
		}
	}
	require.Greater(t, links, 10, "the pages' links were found")
}

func readText(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(raw)
}

var inlineCodeRE = regexp.MustCompile("`[^`\n]*`")

// withoutCode drops fenced blocks and inline code, where a link is text.
func withoutCode(text string) string {
	var b strings.Builder
	fence := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			fence = !fence
			continue
		}
		if !fence {
			b.WriteString(inlineCodeRE.ReplaceAllString(l, "") + "\n")
		}
	}
	return b.String()
}

// headingAnchors returns the anchors GitHub gives a page's headings: lower
// case, punctuation dropped, spaces as hyphens, and -1, -2… after a
// repeated one.
func headingAnchors(text string) []string {
	var anchors []string
	seen := map[string]int{}
	fence := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(l, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var a strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
				a.WriteRune(r)
			case r == ' ':
				a.WriteRune('-')
			}
		}
		anchor := a.String()
		if n := seen[anchor]; n > 0 {
			anchors = append(anchors, fmt.Sprintf("%s-%d", anchor, n))
		} else {
			anchors = append(anchors, anchor)
		}
		seen[anchor]++
	}
	return anchors
}
