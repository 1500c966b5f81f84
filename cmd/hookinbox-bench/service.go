package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hookinbox/hookinbox/internal/procmem"
)

// buildHookinbox builds the binary under test from the working tree, so the
// service runs as it ships rather than inside `go run`.
func buildHookinbox(ctx context.Context, root, work string) (string, error) {
	bin := filepath.Join(work, "hookinbox")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/hookinbox")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/hookinbox: %w\n%s", err, out)
	}
	return bin, nil
}

// serviceConfig has one GitHub source and no downstream, so the only
// registered handlers (issue mirror, Stripe ledger) do not match a push:
// each delivery is processed with no handler and recorded `skipped`, the
// no-op handler case. The admin listener is loopback without a token, and
// serves pprof for the profile of the ingest phase. The generator sends
// its 64 signed bodies again and again under fresh delivery ids, which
// keeps signing off the CPUs the service runs on; to a GitHub source that
// dedupes bodies (its default) they would be replays, so body_dedup is
// off here.
const serviceConfig = `listen: "127.0.0.1:%d"
database_url: "${DATABASE_URL}"
data_dir: %q
sources:
  - name: github
    provider: github
    secrets: [%q]
    body_dedup: false
admin:
  listen: "127.0.0.1:%d"
  pprof: true
ingest:
  batch_window: %s
  job_per_batch: %t
jobs:
  batch_size: %d
`

// serviceOptions are the settings a run may vary.
type serviceOptions struct {
	Role             string        // serve --role: ingest, worker or all
	Name             string        // names its config and log files; defaults to Role
	Extra            string        // YAML appended to the config (destinations, routes)
	BatchWindow      time.Duration // ingest.batch_window; 0 commits each request alone
	ProcessBatchSize int           // jobs.batch_size; 1 processes each delivery alone
	JobPerBatch      bool          // ingest.job_per_batch
	Env              []string      // NAME=value set for this serve only (the tracing scenario's OTEL_*)
}

// service is a running `hookinbox serve`.
type service struct {
	cmd        *exec.Cmd
	webhookURL string
	adminURL   string
	logPath    string
	rss        *rssSampler
	done       chan struct{}
	waitErr    error
	stopOnce   sync.Once
	stopErr    error
}

func startService(ctx context.Context, bin, work, dbURL string, opts serviceOptions) (*service, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	name := cmp.Or(opts.Name, opts.Role)
	cfgPath := filepath.Join(work, "hookinbox-"+name+".yaml")
	cfg := fmt.Sprintf(serviceConfig, ports[0], filepath.Join(work, "data"), benchSecret, ports[1], opts.BatchWindow, opts.JobPerBatch, opts.ProcessBatchSize) + opts.Extra
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	// Its log goes to a file, as a deployed service's would go somewhere:
	// writing a line per delivery is part of its cost.
	logPath := filepath.Join(work, "hookinbox-"+name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()

	cmd := exec.Command(bin, "serve", "--config", cfgPath, "--role", opts.Role)
	cmd.Env = append(append(serviceEnv(), "DATABASE_URL="+dbURL), opts.Env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &service{
		cmd: cmd, webhookURL: fmt.Sprintf("http://127.0.0.1:%d/webhooks/github", ports[0]),
		adminURL: fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
		logPath:  logPath, rss: newRSSSampler(cmd.Process.Pid), done: make(chan struct{}),
	}
	go func() {
		s.waitErr = cmd.Wait()
		s.rss.stop()
		close(s.done)
	}()
	if err := s.waitReady(ctx, fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[0])); err != nil {
		_ = s.stop()
		return nil, err
	}
	return s, nil
}

// serviceEnv is ours minus what would override the generated config, and
// minus OTEL_*: a serve runs with tracing off, as shipped, unless a
// scenario turns it on for that serve (serviceOptions.Env).
func serviceEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "HOOKINBOX_") || strings.HasPrefix(name, "OTEL_") || name == "DATABASE_URL" || strings.HasSuffix(name, "_WEBHOOK_SECRET") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// waitReady polls /readyz: 200 once migrations ran and River's workers
// started.
func (s *service) waitReady(ctx context.Context, url string) error {
	deadline := time.Now().Add(60 * time.Second)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("hookinbox serve exited before it was ready (%v):\n%s", s.waitErr, tail(s.logPath, 20))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("hookinbox serve not ready after 60s:\n%s", tail(s.logPath, 20))
		}
	}
}

// stop sends SIGTERM, as an orchestrator would, and waits for the exit.
func (s *service) stop() error {
	s.stopOnce.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
			if s.waitErr != nil {
				s.stopErr = fmt.Errorf("hookinbox serve exited with %v (log: %s)", s.waitErr, s.logPath)
			}
		case <-time.After(30 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
			s.stopErr = errors.New("hookinbox serve did not stop within 30s of SIGTERM; killed")
		}
	})
	return s.stopErr
}

// cpuProfile takes a CPU profile of the service over d and writes it to
// path; `go tool pprof -top path` reads it without the binary.
func (s *service) cpuProfile(ctx context.Context, d time.Duration, path string) error {
	secs := max(int(d.Seconds()), 1)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", s.adminURL, secs), nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Timeout: time.Duration(secs+30) * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("cpu profile: %s from %s (is admin.pprof supported?)", resp.Status, req.URL)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("cpu profile: %w", err)
	}
	return f.Close()
}

// adminPost POSTs to the service's admin API (loopback, no token: the
// bench's client is no browser, so the cross-site rule lets it through)
// and fails on any answer but 200.
func (s *service) adminPost(ctx context.Context, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.adminURL+path, nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Timeout: 5 * time.Minute}).Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s %s", path, resp.Status, body)
	}
	return nil
}

// batchSizes reads hookinbox_batch_size for stage from the service's
// /metrics: the batches so far and the deliveries they held.
func (s *service) batchSizes(ctx context.Context, stage string) (batchCount, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.adminURL+"/metrics", nil)
	if err != nil {
		return batchCount{}, err
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return batchCount{}, fmt.Errorf("metrics: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return batchCount{}, fmt.Errorf("metrics: %w", err)
	}
	var c batchCount
	label := fmt.Sprintf(`{stage=%q}`, stage)
	for _, line := range strings.Split(string(body), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		switch name {
		case "hookinbox_batch_size_sum" + label:
			c.deliveries, _ = strconv.ParseFloat(value, 64)
		case "hookinbox_batch_size_count" + label:
			c.batches, _ = strconv.ParseFloat(value, 64)
		}
	}
	return c, nil
}

// batchCount is the hookinbox_batch_size histogram's sum and count.
type batchCount struct{ deliveries, batches float64 }

// mean is deliveries per batch, 0 without batches (batching off).
func (c batchCount) mean() float64 {
	if c.batches == 0 {
		return 0
	}
	return c.deliveries / c.batches
}

// since is what was counted after before.
func (c batchCount) since(before batchCount) batchCount {
	return batchCount{deliveries: c.deliveries - before.deliveries, batches: c.batches - before.batches}
}

func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return lastLines(string(b), n)
}

// rssSampler follows a process's resident set: VmRSS sampled every 100ms
// for the peak of a phase (reset starts a phase), VmHWM for the peak of its
// life.
type rssSampler struct {
	pid  int
	mu   sync.Mutex
	peak int64 // kB since reset
	hwm  int64 // kB, last VmHWM read
	quit chan struct{}
	once sync.Once
}

func newRSSSampler(pid int) *rssSampler {
	r := &rssSampler{pid: pid, quit: make(chan struct{})}
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-r.quit:
				return
			case <-t.C:
				r.sample()
			}
		}
	}()
	return r
}

func (r *rssSampler) sample() {
	rss, hwm, err := procmem.Read(r.pid)
	if err != nil || rss == 0 {
		return
	}
	r.mu.Lock()
	r.peak, r.hwm = max(r.peak, rss), max(r.hwm, hwm)
	r.mu.Unlock()
}

func (r *rssSampler) reset() {
	r.mu.Lock()
	r.peak = 0
	r.mu.Unlock()
}

func (r *rssSampler) peakMB() float64 {
	r.sample()
	r.mu.Lock()
	defer r.mu.Unlock()
	return float64(r.peak) / 1024
}

func (r *rssSampler) highWaterMB() float64 {
	r.sample()
	r.mu.Lock()
	defer r.mu.Unlock()
	return float64(r.hwm) / 1024
}

func (r *rssSampler) stop() { r.once.Do(func() { close(r.quit) }) }
