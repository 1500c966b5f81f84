package pgembed

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// fallbackRoot holds clusters whose configured directory the unprivileged
// user cannot reach. It is under /var/lib rather than /var/tmp because
// tmpfiles cleaners (30 days on Fedora and Arch) delete old files one by one,
// which would silently corrupt an idle cluster.
const fallbackRoot = "/var/lib/hookinbox"

// account is the user PostgreSQL runs as.
type account struct {
	uid, gid int
	name     string
	// cred is nil when PostgreSQL runs as this process's own user.
	cred *syscall.Credential
}

func (a account) sysProcAttr() *syscall.SysProcAttr {
	// Own process group: a terminal Ctrl-C reaches only hookinbox, which
	// then stops PostgreSQL in order.
	return &syscall.SysProcAttr{Credential: a.cred, Setpgid: true}
}

func (a account) chown(path string) error {
	if a.cred == nil {
		return nil
	}
	return os.Lchown(path, a.uid, a.gid)
}

// cluster is where a cluster lives and who runs it. Its companion files sit
// next to it: for a cluster in ".../pg" they are "pg.password", "pg.port",
// "pg.log" and "pg.lock". The password file must exist before initdb, which
// wants an empty directory, so it cannot live inside the cluster. They belong
// to the cluster's owner, so a cluster used both with and without root (run
// as its owner then) keeps working both ways.
type cluster struct {
	dir   string
	owner account
	// fallback is set when dir is a fallbackDir instead of the
	// configured place; then filepath.Dir(dir) belongs to this cluster alone.
	fallback bool
}

func (c cluster) companion(ext string) string { return c.dir + "." + ext }

func (c cluster) initialized() bool { return isCluster(c.dir) }

func isCluster(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "PG_VERSION"))
	return err == nil
}

// fallbackDir is stable per configured path, so later starts find the
// cluster again. A configured path under /tmp (a test's) falls back to /tmp
// too: it was throwaway already, and a test that forgets to remove its
// fallback leaves it where reboots and tmp cleaners collect it. (Not
// os.TempDir: a TMPDIR the postgres user cannot reach is common as root.)
func fallbackDir(abs string) string {
	sum := sha256.Sum256([]byte(abs))
	hash := hex.EncodeToString(sum[:6])
	if strings.HasPrefix(abs, "/tmp/") {
		return filepath.Join("/tmp", "hookinbox-pg-"+hash, filepath.Base(abs))
	}
	return filepath.Join(fallbackRoot, "pg-"+hash, filepath.Base(abs))
}

// resolveCluster decides where the cluster lives and as whom it runs.
// PostgreSQL refuses to run as root, so as root it runs as the owner of an
// existing non-root data directory, else as the "postgres" user; if that user
// cannot reach the configured directory (a checkout under a 0700 home, an
// os.MkdirTemp directory) the cluster moves to a fallback directory.
func resolveCluster(ctx context.Context, dataDir string, logger *slog.Logger) (cluster, error) {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return cluster{}, fmt.Errorf("pgembed: data dir: %w", err)
	}
	if filepath.Dir(abs) == abs {
		return cluster{}, fmt.Errorf("pgembed: data dir %s: cannot be the root directory", abs)
	}
	if os.Geteuid() != 0 {
		name := strconv.Itoa(os.Getuid())
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
		return cluster{dir: abs, owner: account{uid: os.Getuid(), gid: os.Getgid(), name: name}}, nil
	}

	// A fallback always runs as postgres: it is ours, never a user's
	// directory, and /tmp ones could be planted by anybody.
	fallback := fallbackDir(abs)
	if isCluster(fallback) {
		owner, err := postgresAccount()
		if err != nil {
			return cluster{}, err
		}
		logger.Warn("pgembed: using the fallback cluster created on an earlier start, as the configured data dir was not reachable by the PostgreSQL user",
			"configured", abs, "data_dir", fallback, "user", owner.name)
		return cluster{dir: fallback, owner: owner, fallback: true}, nil
	}

	owner, err := ownerFor(abs)
	if err != nil {
		return cluster{}, err
	}
	ok, err := canReach(ctx, owner, nearestExisting(filepath.Dir(abs)))
	if err != nil {
		return cluster{}, err
	}
	if ok {
		return cluster{dir: abs, owner: owner}, nil
	}

	if owner, err = postgresAccount(); err != nil {
		return cluster{}, err
	}
	logger.Warn("pgembed: PostgreSQL cannot run as root and its user cannot reach the configured data dir; using a fallback directory",
		"configured", abs, "data_dir", fallback, "user", owner.name)
	return cluster{dir: fallback, owner: owner, fallback: true}, nil
}

// ownerFor returns the account to run a cluster in dir as, when root: the
// directory's owner if it exists and is not root (a cluster made without
// root keeps working for its user), else the postgres user.
func ownerFor(dir string) (account, error) {
	fi, err := os.Stat(dir)
	switch {
	case err == nil:
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 {
			name := strconv.Itoa(int(st.Uid))
			if u, err := user.LookupId(name); err == nil {
				name = u.Username
			}
			return newAccount(int(st.Uid), int(st.Gid), name), nil
		}
	case !errors.Is(err, fs.ErrNotExist):
		return account{}, fmt.Errorf("pgembed: data dir: %w", err)
	}
	return postgresAccount()
}

func postgresAccount() (account, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return account{}, fmt.Errorf("pgembed: PostgreSQL refuses to run as root and there is no \"postgres\" user to run it as: %w", err)
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return account{}, fmt.Errorf("pgembed: user postgres: uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return account{}, fmt.Errorf("pgembed: user postgres: gid %q: %w", u.Gid, err)
	}
	return newAccount(uid, gid, u.Username), nil
}

func newAccount(uid, gid int, name string) account {
	return account{uid: uid, gid: gid, name: name,
		cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
}

func nearestExisting(dir string) string {
	for {
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}

// canReach reports whether the account can search dir. Permissions along the
// whole path count (access(2) checks every component), and running the check
// as that user is the only way to get groups and ACLs right.
func canReach(ctx context.Context, a account, dir string) (bool, error) {
	if a.cred == nil {
		return true, nil
	}
	testBin, err := exec.LookPath("test")
	if err != nil {
		testBin = "/usr/bin/test"
	}
	cmd := exec.CommandContext(ctx, testBin, "-x", dir)
	cmd.Dir = "/"
	cmd.SysProcAttr = a.sysProcAttr()
	err = cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &exitErr) && exitErr.ExitCode() == 1:
		return false, nil
	default:
		return false, fmt.Errorf("pgembed: checking whether user %s can reach %s: %w", a.name, dir, err)
	}
}

// prepare creates the cluster directory (empty, for initdb) and makes the
// account own it.
func (c cluster) prepare(ctx context.Context) error {
	parent := filepath.Dir(c.dir)
	if c.fallback {
		if err := os.MkdirAll(filepath.Dir(parent), 0o755); err != nil {
			return fmt.Errorf("pgembed: fallback dir: %w", err)
		}
		if err := os.Mkdir(parent, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("pgembed: fallback dir: %w", err)
		}
		// In /tmp someone else may have made it first (say, a symlink to
		// where root should not write, or a cluster of their own).
		fi, err := os.Lstat(parent)
		if err != nil {
			return fmt.Errorf("pgembed: fallback dir: %w", err)
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || !ok || (st.Uid != 0 && int(st.Uid) != c.owner.uid) {
			return fmt.Errorf("pgembed: fallback dir %s is not a directory owned by root or %s; remove it", parent, c.owner.name)
		}
		if err := c.owner.chown(parent); err != nil {
			return fmt.Errorf("pgembed: fallback dir: %w", err)
		}
		ok, err := canReach(ctx, c.owner, parent)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("pgembed: user %s cannot reach the fallback dir %s either", c.owner.name, parent)
		}
	} else if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("pgembed: data dir: %w", err)
	}

	err := os.Mkdir(c.dir, 0o700)
	switch {
	case err == nil:
		return c.owner.chown(c.dir)
	case !errors.Is(err, fs.ErrExist):
		return fmt.Errorf("pgembed: data dir: %w", err)
	}
	fi, err := os.Stat(c.dir)
	if err != nil {
		return fmt.Errorf("pgembed: data dir: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("pgembed: data dir %s is not a directory", c.dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && c.owner.cred != nil && int(st.Uid) != c.owner.uid {
		// Only a root-owned directory gets here (ownerFor keeps other
		// owners), e.g. one made by os.MkdirTemp.
		return filepath.WalkDir(c.dir, func(path string, _ fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return c.owner.chown(path)
		})
	}
	return nil
}

// password returns the superuser password, creating it for a new cluster.
func (c cluster) password() (string, error) {
	path := c.companion("password")
	b, err := os.ReadFile(path)
	if err == nil {
		if pw := strings.TrimSpace(string(b)); pw != "" {
			return pw, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("pgembed: password file: %w", err)
	}
	if c.initialized() {
		return "", fmt.Errorf("pgembed: %s holds a cluster but its password file %s is missing or empty; remove the cluster to start over", c.dir, path)
	}
	pw := rand.Text()
	if err := os.WriteFile(path, []byte(pw+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("pgembed: password file: %w", err)
	}
	// initdb reads it as the cluster's user.
	if err := c.owner.chown(path); err != nil {
		return "", fmt.Errorf("pgembed: password file: %w", err)
	}
	return pw, nil
}

// lock takes the cluster's lock file, held while a Server runs it: it tells
// an orphaned postmaster (its hookinbox died, releasing the lock) from one
// another live process is using.
func (c cluster) lock() (*os.File, error) {
	path := c.companion("lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("pgembed: lock file: %w", err)
	}
	if err := c.owner.chown(path); err != nil {
		f.Close()
		return nil, fmt.Errorf("pgembed: lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s (lock %s)", ErrInUse, c.dir, path)
		}
		return nil, fmt.Errorf("pgembed: lock file: %w", err)
	}
	return f, nil
}

// choosePort returns want if set, else the remembered port if it is free,
// else a free loopback port. Ports in avoid failed to bind this start.
func (c cluster) choosePort(want int, avoid map[int]bool) (int, error) {
	if want != 0 {
		return want, nil
	}
	if b, err := os.ReadFile(c.companion("port")); err == nil {
		if port, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil &&
			port > 0 && port <= 65535 && !avoid[port] && portFree(port) {
			return port, nil
		}
	}
	for range 10 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("pgembed: picking a port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !avoid[port] {
			return port, nil
		}
	}
	return 0, errors.New("pgembed: picking a port: no free port found")
}

func (c cluster) rememberPort(port int) error {
	path := c.companion("port")
	if err := os.WriteFile(path, []byte(strconv.Itoa(port)+"\n"), 0o600); err != nil {
		return fmt.Errorf("pgembed: port file: %w", err)
	}
	if err := c.owner.chown(path); err != nil {
		return fmt.Errorf("pgembed: port file: %w", err)
	}
	return nil
}

func portFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// remove deletes the cluster and its companion files.
func (c cluster) remove() error {
	if c.fallback {
		return os.RemoveAll(filepath.Dir(c.dir))
	}
	errs := []error{os.RemoveAll(c.dir)}
	for _, ext := range []string{"password", "port", "log", "lock"} {
		if err := os.Remove(c.companion(ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
