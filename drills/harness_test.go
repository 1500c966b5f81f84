package drills

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// proc is one hookinbox serve child process. It keeps its ports across
// kills and restarts, so senders can keep their URLs.
type proc struct {
	t       testing.TB
	name    string
	dir     string
	cfg     serveConfig
	cfgPath string
	ingest  string // host:port
	admin   string // host:port
	args    []string
	logPath string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	kills  int
}

// readyTimeout bounds one start: migrations, River, a database that may
// just be coming back.
const readyTimeout = 60 * time.Second

// startProc starts hookinbox serve with cfg and waits until /readyz says
// ready. The process is stopped when t ends. Extra args go to serve (e.g.
// --migrate=false).
func startProc(t testing.TB, name string, cfg serveConfig, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, name: name, dir: t.TempDir(), cfg: cfg, args: args}
	p.logPath = filepath.Join(p.dir, "hookinbox.log")
	t.Cleanup(p.cleanup)
	// A port picked free can be taken before hookinbox binds it.
	var err error
	for try := 0; try < 3; try++ {
		p.ingest, p.admin = freeAddr(t), freeAddr(t)
		p.cfgPath = writeConfig(t, p.dir, cfg, p.ingest, p.admin)
		if err = p.start(); err == nil {
			return p
		}
		if !strings.Contains(p.logTail(20), "address already in use") {
			break
		}
	}
	t.Fatalf("%s: %v\n%s", name, err, p.logTail(40))
	return nil
}

// URL is the ingest base URL.
func (p *proc) URL() string { return "http://" + p.ingest }

// AdminURL is the admin listener's base URL.
func (p *proc) AdminURL() string { return "http://" + p.admin }

// start launches the process and waits until it is ready.
func (p *proc) start() error {
	if err := p.launch(); err != nil {
		return err
	}
	return p.waitReady(readyTimeout)
}

func (p *proc) launch() error {
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "---- drill: starting %s\n", p.name)
	cmd := exec.Command(hookinboxBin, append([]string{"serve", "--config", p.cfgPath}, p.args...)...)
	cmd.Dir = p.dir
	cmd.Env = childEnv()
	cmd.Stdout, cmd.Stderr = logf, logf
	// If the test binary dies, its hookinbox processes die with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p.mu.Lock()
	p.cmd, p.exited = cmd, exited
	p.mu.Unlock()
	return nil
}

// childEnv is a minimal environment: hookinbox reads DATABASE_URL and
// HOOKINBOX_* overrides, which must not leak in from the test's shell.
func childEnv() []string {
	env := []string{}
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "TZ"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// waitReady polls /readyz until it answers 200, the process exits, or the
// timeout passes.
func (p *proc) waitReady(timeout time.Duration) error {
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("hookinbox exited before it was ready")
		default:
		}
		resp, err := client.Get(p.URL() + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("hookinbox not ready within %s", timeout)
}

// kill sends SIGKILL (no shutdown of any kind) and waits for the exit.
func (p *proc) kill() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.kills++
	p.mu.Unlock()
	_ = cmd.Process.Kill()
	<-exited
}

// restart starts the process again after kill, on the same ports. It may
// run outside the test's goroutine, so it returns its error.
func (p *proc) restart() error {
	if err := p.start(); err != nil {
		return fmt.Errorf("%s: restart: %w\n%s", p.name, err, p.logTail(40))
	}
	return nil
}

// Kills is how many times kill was called.
func (p *proc) Kills() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.kills
}

// PID is the current process's id.
func (p *proc) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Pid
}

// stop sends SIGTERM and waits for the graceful exit, killing the process
// if it takes longer than hookinbox's shutdown budget allows.
func (p *proc) stop() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-exited:
		return
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
}

func (p *proc) cleanup() {
	p.stop()
	if p.t.Failed() {
		p.t.Logf("%s log (last lines):\n%s", p.name, p.logTail(60))
	}
}

// riverClientID is the ID of the River client of the process's latest
// run, from its "River client started" log line; "" before there is one.
// River records it in attempted_by of every job that client fetches.
func (p *proc) riverClientID() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	text := string(b)
	i := strings.LastIndex(text, `msg="River client started"`)
	if i < 0 {
		return ""
	}
	line, _, _ := strings.Cut(text[i:], "\n")
	_, id, ok := strings.Cut(line, " client_id=")
	if !ok {
		return ""
	}
	id, _, _ = strings.Cut(id, " ")
	return id
}

// logTail returns the last n lines the process (all its runs) logged.
func (p *proc) logTail(n int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// waitFor polls cond every interval until it is true or timeout passes,
// and reports whether it became true.
func waitFor(ctx context.Context, timeout, interval time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}
