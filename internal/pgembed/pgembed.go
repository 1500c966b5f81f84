// Package pgembed runs a private PostgreSQL server from the binaries
// installed on the machine: hookinbox's database when no DATABASE_URL is
// configured, and one throwaway server per test binary.
//
// A cluster in ".../pg" keeps companion files next to it: "pg.password" (the
// superuser password, 0600), "pg.port" (the port of the last start), "pg.log"
// (the server log) and "pg.lock" (held while a Server runs the cluster).
//
// PostgreSQL refuses to run as root. As root, the server runs as the
// "postgres" user (or the non-root owner of an existing data directory), and
// when that user cannot reach the configured directory the cluster lives in
// /var/lib/hookinbox/pg-<hash of the configured path>/ instead (or, for a
// configured path under /tmp, in /tmp/hookinbox-pg-<hash>/).
package pgembed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrInUse means another Server, in this process or another, is running the
// cluster.
var ErrInUse = errors.New("pgembed: data dir is in use by another running server")

// Config configures an embedded PostgreSQL.
type Config struct {
	// DataDir is the cluster directory. It is created with initdb if it is
	// missing or empty and reused if it already holds a cluster. As root it
	// may be replaced by a fallback directory; see Server.DataDir. Required.
	DataDir string

	// BinDir holds the initdb and postgres binaries. Defaults to FindBinDir().
	BinDir string

	// Port is the loopback TCP port to listen on. 0 reuses the port of the
	// last start in this DataDir if it is still free, else picks a free one.
	// The port used is remembered next to the cluster. Defaults to 0.
	Port int

	// Database is created on first start and is the database in URL.
	// Defaults to "hookinbox".
	Database string

	// Fsync makes the server durable. False suits throwaway test clusters:
	// initdb --no-sync and fsync, synchronous_commit and full_page_writes
	// off, so a machine crash can corrupt the cluster. `serve` sets true.
	// Defaults to false.
	Fsync bool

	// Settings are extra server settings ("name=value", as postgres -c
	// takes them), such as the benchmark's shared_preload_libraries.
	// Defaults to none.
	Settings []string

	// Logger receives the data dir used, the URL (password masked) and any
	// fallback decision. Defaults to discarding everything.
	Logger *slog.Logger

	// StartTimeout bounds waiting for the server to accept connections, and
	// for an orphaned server on the same cluster to stop. initdb is bounded
	// only by Start's ctx. Defaults to 30s.
	StartTimeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.Database == "" {
		c.Database = "hookinbox"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = 30 * time.Second
	}
	return c
}

func (c Config) validate() error {
	if c.DataDir == "" {
		return errors.New("pgembed: Config.DataDir is required")
	}
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("pgembed: Config.Port %d out of range", c.Port)
	}
	if c.StartTimeout < 0 {
		return fmt.Errorf("pgembed: Config.StartTimeout %s is negative", c.StartTimeout)
	}
	return nil
}

// Server is a running embedded PostgreSQL.
type Server struct {
	cluster  cluster
	url      string
	pm       *postmaster
	stopping atomic.Bool
	unlock   func() // releases the lock once
}

// Start starts PostgreSQL on cfg.DataDir, creating the cluster and the
// database first if needed, and returns once the server accepts connections.
// ctx bounds startup only; the server runs until Stop.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.BinDir == "" {
		dir, err := FindBinDir()
		if err != nil {
			return nil, err
		}
		cfg.BinDir = dir
	} else if !hasServerBinaries(cfg.BinDir) {
		return nil, fmt.Errorf("%w (looked in %s)", ErrNoBinaries, cfg.BinDir)
	}

	c, err := resolveCluster(ctx, cfg.DataDir, cfg.Logger)
	if err != nil {
		return nil, err
	}
	if err := c.prepare(ctx); err != nil {
		return nil, err
	}
	lock, err := c.lock()
	if err != nil {
		return nil, err
	}
	s := &Server{cluster: c}
	s.unlock = sync.OnceFunc(func() { lock.Close() })
	if err := s.start(ctx, cfg); err != nil {
		s.unlock()
		return nil, err
	}
	go func() {
		<-s.pm.done
		if !s.stopping.Load() {
			cfg.Logger.Error("pgembed: PostgreSQL exited unexpectedly",
				"err", s.pm.exitErr, "data_dir", c.dir, "log", s.pm.logPath)
		}
	}()
	// The password stays out of logs: URL() hands it to code, not to people.
	cfg.Logger.Info("pgembed: PostgreSQL ready", "data_dir", c.dir, "url", redacted(s.url), "user", c.owner.name)
	return s, nil
}

func (s *Server) start(ctx context.Context, cfg Config) error {
	c := s.cluster
	password, err := c.password()
	if err != nil {
		return err
	}
	if !c.initialized() {
		cfg.Logger.Info("pgembed: creating PostgreSQL cluster", "data_dir", c.dir, "bin_dir", cfg.BinDir)
		if err := c.initdb(ctx, cfg.BinDir, cfg.Fsync); err != nil {
			return err
		}
	}
	if err := c.stopOrphan(ctx, cfg.StartTimeout, cfg.Logger); err != nil {
		return err
	}

	pm, port, err := c.run(ctx, cfg, password)
	if err != nil {
		return err
	}
	s.pm = pm
	s.url = serverURL(password, port, cfg.Database)
	err = c.rememberPort(port)
	if err == nil {
		err = ensureDatabase(ctx, serverURL(password, port, "postgres"), cfg.Database)
	}
	if err != nil {
		_ = s.Stop(context.WithoutCancel(ctx))
		return err
	}
	return nil
}

// run launches postgres and waits until it accepts connections. A port it
// picked can be taken before postgres binds it, most likely by another test
// binary doing the same; then it picks another.
func (c cluster) run(ctx context.Context, cfg Config, password string) (*postmaster, int, error) {
	failedPorts := map[int]bool{}
	for {
		port, err := c.choosePort(cfg.Port, failedPorts)
		if err != nil {
			return nil, 0, err
		}
		pm, err := c.launch(cfg.BinDir, port, cfg.Fsync, cfg.Settings)
		if err != nil {
			return nil, 0, err
		}
		err = pm.waitReady(ctx, cfg.StartTimeout, serverURL(password, port, "postgres"))
		if err == nil {
			return pm, port, nil
		}
		pm.kill()
		var startErr *startError
		if cfg.Port != 0 || len(failedPorts) >= 3 || !errors.As(err, &startErr) || !startErr.portTaken() {
			return nil, 0, err
		}
		failedPorts[port] = true
		cfg.Logger.Warn("pgembed: port taken before PostgreSQL could bind it; retrying with another", "port", port)
	}
}

func serverURL(password string, port int, database string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(superuser, password),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Path:     "/" + database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// redacted is raw with its password masked.
func redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}

// ErrNoCluster means no cluster has been created in the data dir yet.
var ErrNoCluster = errors.New("pgembed: no PostgreSQL cluster here yet")

// URLOf returns the URL of the cluster in cfg.DataDir, wherever Start
// would run it (the fallback directory included), without starting it:
// its password and the port of its last start. It is for a person
// connecting while a Server runs the cluster; the port may change on the
// next start if another program took it meanwhile.
func URLOf(ctx context.Context, cfg Config) (string, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return "", err
	}
	c, err := resolveCluster(ctx, cfg.DataDir, cfg.Logger)
	if err != nil {
		return "", err
	}
	if !c.initialized() {
		return "", fmt.Errorf("%w: %s", ErrNoCluster, c.dir)
	}
	password, err := c.password()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(c.companion("port"))
	if err != nil {
		return "", fmt.Errorf("pgembed: port file: %w", err)
	}
	port, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return "", fmt.Errorf("pgembed: port file %s: %w", c.companion("port"), err)
	}
	return serverURL(password, port, cfg.Database), nil
}

// URL returns the connection URL for Config.Database:
// postgres://hookinbox:PASSWORD@127.0.0.1:PORT/DATABASE?sslmode=disable.
func (s *Server) URL() string { return s.url }

// DataDir returns the cluster directory actually used: Config.DataDir made
// absolute, or the fallback directory when running as root and the postgres
// user cannot reach Config.DataDir.
func (s *Server) DataDir() string { return s.cluster.dir }

// Stop shuts the server down fast (clients are disconnected, no crash
// recovery on the next start) and waits for it to exit. If ctx ends first it
// escalates to an immediate shutdown and returns ctx's error; call Stop again
// to wait for the exit. Stop is idempotent and returns nil once the server is
// gone, however it went.
func (s *Server) Stop(ctx context.Context) error {
	if s == nil {
		return nil
	}
	if s.stopping.CompareAndSwap(false, true) {
		s.pm.signal(syscall.SIGINT)
	}
	select {
	case <-s.pm.done:
	case <-ctx.Done():
		if !s.pm.exited() {
			s.pm.signal(syscall.SIGQUIT)
			return fmt.Errorf("pgembed: waiting for PostgreSQL to stop (sent immediate shutdown): %w", ctx.Err())
		}
	}
	s.unlock()
	return nil
}

// Destroy stops the server and deletes the cluster with its companion files
// (and the fallback directory, if one was used). It is for throwaway
// clusters, e.g. a test binary's.
func (s *Server) Destroy(ctx context.Context) error {
	if s == nil {
		return nil
	}
	if err := s.Stop(ctx); err != nil {
		return err
	}
	if err := s.cluster.remove(); err != nil {
		return fmt.Errorf("pgembed: removing cluster: %w", err)
	}
	return nil
}
