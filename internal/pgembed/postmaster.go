package pgembed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// cannotConnectNow is SQLSTATE 57P03: "the database system is starting up".
const cannotConnectNow = "57P03"

// superuser is the cluster's bootstrap superuser, which hookinbox connects as.
const superuser = "hookinbox"

// command builds a command for a PostgreSQL binary, run as the cluster's
// account.
func (c cluster) command(ctx context.Context, bin string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	// The caller's working directory may be one the account cannot reach.
	cmd.Dir = "/"
	cmd.Env = childEnv()
	cmd.SysProcAttr = c.owner.sysProcAttr()
	return cmd
}

// childEnv is our environment without PG* variables, which would otherwise
// steer the server tools (PGDATA, PGPORT, ...).
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	return env
}

func (c cluster) initdb(ctx context.Context, binDir string, fsync bool) error {
	run := func(locale string) ([]byte, error) {
		args := []string{
			"-D", c.dir,
			"-U", superuser,
			"--auth=scram-sha-256",
			"--pwfile=" + c.companion("password"),
			"-E", "UTF8",
			"--locale=" + locale,
		}
		if !fsync {
			args = append(args, "--no-sync")
		}
		return c.command(ctx, filepath.Join(binDir, "initdb"), args...).CombinedOutput()
	}
	out, err := run("C.UTF-8")
	if err != nil && bytes.Contains(out, []byte("locale")) {
		// No C.UTF-8 on this system (old glibc): C sorts the same, it only
		// lacks non-ASCII character classes. initdb has emptied the
		// directory again.
		out, err = run("C")
	}
	if err != nil {
		return fmt.Errorf("pgembed: initdb %s: %w\n%s", c.dir, err, bytes.TrimSpace(out))
	}
	return nil
}

// stopOrphan stops a postmaster still running on this cluster whose
// hookinbox died without stopping it (we hold the lock, so nobody else owns
// it). A stale postmaster.pid of a dead process is left to PostgreSQL.
func (c cluster) stopOrphan(ctx context.Context, timeout time.Duration, logger *slog.Logger) error {
	b, err := os.ReadFile(filepath.Join(c.dir, "postmaster.pid"))
	if err != nil {
		return nil
	}
	firstLine, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(firstLine))
	if err != nil || pid <= 0 || !alive(pid) {
		return nil
	}
	// The pid may have been reused by an unrelated process. A postmaster
	// works in its data directory, so its cwd identifies it.
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if err != nil {
		return nil
	}
	dir, err := filepath.EvalSymlinks(c.dir)
	if err != nil || cwd != dir {
		return nil
	}

	logger.Warn("pgembed: stopping an orphaned PostgreSQL left running on this data dir", "pid", pid, "data_dir", c.dir)
	// SIGINT is a fast shutdown; SIGQUIT an immediate one (crash recovery
	// on the next start) if that takes too long.
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGQUIT} {
		if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("pgembed: stopping orphaned PostgreSQL (pid %d): %w", pid, err)
		}
		if waitGone(ctx, pid, timeout) {
			return nil
		}
	}
	return fmt.Errorf("pgembed: orphaned PostgreSQL (pid %d) on %s did not stop within %s", pid, c.dir, timeout)
}

// alive reports whether pid is a running process; a zombie has released
// everything and counts as gone.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// Format: "pid (comm) state ...", and comm may contain spaces or ")".
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

func waitGone(ctx context.Context, pid int, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for alive(pid) {
		select {
		case <-ctx.Done():
			return !alive(pid)
		case <-tick.C:
		}
	}
	return true
}

// postmaster is one run of the postgres server process.
type postmaster struct {
	cmd     *exec.Cmd
	done    chan struct{} // closed once the process has exited and been reaped
	exitErr error         // valid after done
	logPath string
	logFrom int64 // offset in the log where this run starts
}

// DurableSettings are what a durable server (Config.Fsync) runs with
// besides PostgreSQL's defaults, and shared_buffers sized to the machine
// (shared_buffers.go); Config.Settings come after them, and win.
//
// max_wal_size: PostgreSQL starts a checkpoint once about max_wal_size ÷ (1 +
// checkpoint_completion_target) of WAL was written since the last one, and
// after each checkpoint the first change to every page logs the whole page.
// With the default 1GB, one default serve at 4,200 deliveries/s (21 MB of WAL
// a second) checkpointed every 25 s; with 4GB, on the checkpoint_timeout of 5
// minutes, which shortened the steady benchmark's ack tail (bench/README.md,
// Design decisions, "WAL settings"). The price is disk: pg_wal may grow to
// about this size under sustained load before it is recycled, and crash
// recovery replays up to that much.
//
// wal_init_zero=off: a WAL segment is recycled only at the end of a
// checkpoint, so until a new server's first checkpoint by WAL volume ends
// (with max_wal_size=4GB, some 2 GB of WAL into its life) and whenever the
// WAL outgrows what earlier checkpoints kept, every 16 MB segment is a new
// file. PostgreSQL writes a new file full of zeros and syncs it while it
// holds the WAL write lock, and every commit waits behind it: in a held step
// the slow seconds ran from the first new segment to that checkpoint's end
// (bench/README.md, Design decisions, "WAL settings"). Off, PostgreSQL writes
// a new segment's last byte only and the file system allocates its blocks as
// the WAL is written; a commit's fdatasync then also commits that allocation,
// as it must to find the data after a crash, so durability is unchanged. (The
// zeros exist so that the space is reserved ahead: a full disk fails a WAL
// write instead, and PostgreSQL stops either way.)
var DurableSettings = []string{"max_wal_size=4GB", "wal_init_zero=off"}

func (c cluster) launch(binDir string, port int, fsync bool, settings []string) (*postmaster, error) {
	logPath := c.companion("log")
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("pgembed: server log: %w", err)
	}
	defer logFile.Close() // the child has its own copy
	if err := c.owner.chown(logPath); err != nil {
		return nil, fmt.Errorf("pgembed: server log: %w", err)
	}
	fi, err := logFile.Stat()
	if err != nil {
		return nil, fmt.Errorf("pgembed: server log: %w", err)
	}

	args := []string{
		"-D", c.dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "port=" + strconv.Itoa(port),
		// No unix socket: no socket directory to create or reach.
		"-c", "unix_socket_directories=",
		// Test binaries open many pools against one server.
		"-c", "max_connections=200",
	}
	if !fsync {
		args = append(args,
			"-c", "fsync=off",
			"-c", "synchronous_commit=off",
			"-c", "full_page_writes=off",
		)
	} else {
		for _, setting := range DurableSettings {
			args = append(args, "-c", setting)
		}
		args = append(args, "-c", sharedBuffersSetting())
	}
	for _, setting := range settings {
		args = append(args, "-c", setting)
	}
	// Not tied to a context: the server outlives Start's ctx until Stop.
	cmd := c.command(context.Background(), filepath.Join(binDir, "postgres"), args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("pgembed: starting postgres: %w", err)
	}
	p := &postmaster{cmd: cmd, done: make(chan struct{}), logPath: logPath, logFrom: fi.Size()}
	go func() {
		p.exitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *postmaster) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *postmaster) signal(sig os.Signal) {
	// os.ErrProcessDone once reaped: nothing left to stop.
	_ = p.cmd.Process.Signal(sig)
}

// kill brings down a postmaster that failed to start properly.
func (p *postmaster) kill() {
	p.signal(syscall.SIGQUIT)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		p.signal(syscall.SIGKILL)
		<-p.done
	}
}

// logTail returns the end of this run's server log, for error messages.
func (p *postmaster) logTail() string {
	const maxTail = 4 << 10
	f, err := os.Open(p.logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	from := p.logFrom
	if fi, err := f.Stat(); err == nil && fi.Size()-from > maxTail {
		from = fi.Size() - maxTail
	}
	b, err := io.ReadAll(io.NewSectionReader(f, from, maxTail))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// startError is a failed start, with the server log's tail.
type startError struct {
	msg  string
	err  error
	tail string
}

func (e *startError) Error() string {
	s := "pgembed: " + e.msg
	if e.err != nil {
		s += ": " + e.err.Error()
	}
	if e.tail != "" {
		s += "\nserver log:\n" + e.tail
	}
	return s
}

func (e *startError) Unwrap() error { return e.err }

// portTaken reports whether the server failed because its port was taken
// between our check and its bind.
func (e *startError) portTaken() bool {
	return strings.Contains(e.tail, "could not bind") ||
		strings.Contains(e.tail, "could not create any TCP/IP sockets")
}

// waitReady polls until the server accepts connections.
func (p *postmaster) waitReady(ctx context.Context, timeout time.Duration, url string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// A connection attempt can hang on whatever else holds the port; the
	// server's exit must end it.
	go func() {
		select {
		case <-p.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		err := ping(ctx, url)
		if err == nil {
			return nil
		}
		if p.exited() {
			return &startError{msg: "PostgreSQL exited during startup", err: p.exitErr, tail: p.logTail()}
		}
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code != cannotConnectNow {
			// Answered but refused, e.g. a password that does not match
			// the cluster: polling longer will not help.
			return &startError{msg: "connecting to PostgreSQL", err: err, tail: p.logTail()}
		}
		select {
		case <-ctx.Done():
			if p.exited() {
				return &startError{msg: "PostgreSQL exited during startup", err: p.exitErr, tail: p.logTail()}
			}
			return &startError{
				msg:  fmt.Sprintf("waiting for PostgreSQL to accept connections (timeout %s)", timeout),
				err:  fmt.Errorf("%w (last attempt: %v)", ctx.Err(), err),
				tail: p.logTail(),
			}
		case <-tick.C:
		}
	}
}

func ping(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}

func ensureDatabase(ctx context.Context, url, name string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("pgembed: connecting to create database %q: %w", name, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return fmt.Errorf("pgembed: looking up database %q: %w", name, err)
	}
	if exists {
		return nil
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return fmt.Errorf("pgembed: creating database %q: %w", name, err)
	}
	return nil
}
