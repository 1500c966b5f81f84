package pgembed

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/procmem"
	"github.com/hookinbox/hookinbox/internal/testlog"
)

type testBundle struct {
	cfg  Config
	logs *testlog.Buffer
}

// setup returns a config for a fresh cluster. reachable chooses a data dir
// the postgres user can reach; otherwise it is under a 0700 os.MkdirTemp
// directory, which as root forces the fallback.
func setup(t *testing.T, reachable bool) *testBundle {
	t.Helper()
	root := t.TempDir()
	if reachable {
		require.NoError(t, os.Chmod(root, 0o755))
		require.NoError(t, os.Chmod(filepath.Dir(root), 0o755))
	}
	dataDir := filepath.Join(root, "pg")
	if os.Geteuid() == 0 {
		area := filepath.Dir(fallbackDir(dataDir))
		t.Cleanup(func() { require.NoError(t, os.RemoveAll(area)) })
	}
	logs := &testlog.Buffer{}
	return &testBundle{
		cfg: Config{
			DataDir: dataDir,
			Logger:  slog.New(slog.NewTextHandler(logs, nil)),
		},
		logs: logs,
	}
}

// start starts a server that is stopped when the test ends (registered after
// setup's cleanup, so it runs first).
func start(t *testing.T, cfg Config) *Server {
	t.Helper()
	srv, err := Start(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		require.NoError(t, srv.Stop(ctx))
	})
	return srv
}

func connect(t *testing.T, srv *Server) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), srv.URL())
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func queryString(t *testing.T, conn *pgx.Conn, sql string) string {
	t.Helper()
	var s string
	require.NoError(t, conn.QueryRow(t.Context(), sql).Scan(&s))
	return s
}

func urlPort(t *testing.T, srv *Server) int {
	t.Helper()
	u, err := url.Parse(srv.URL())
	require.NoError(t, err)
	port, err := strconv.Atoi(u.Port())
	require.NoError(t, err)
	return port
}

func TestStartPersistsAcrossRestarts(t *testing.T) {
	t.Parallel()
	bundle := setup(t, true)
	bundle.cfg.Fsync = true

	srv := start(t, bundle.cfg)
	require.Equal(t, bundle.cfg.DataDir, srv.DataDir())
	u, err := url.Parse(srv.URL())
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1", u.Hostname())
	require.Equal(t, "/hookinbox", u.Path)
	require.Equal(t, "sslmode=disable", u.RawQuery)
	password, _ := u.User.Password()
	require.Contains(t, bundle.logs.String(), u.Redacted(), "the URL is logged…")
	require.NotContains(t, bundle.logs.String(), password, "…without its password")

	conn := connect(t, srv)
	require.Equal(t, "on", queryString(t, conn, "SHOW fsync"))
	require.Equal(t, "hookinbox", queryString(t, conn, "SELECT current_user"))
	require.Equal(t, "hookinbox", queryString(t, conn, "SELECT current_database()"))
	require.Equal(t, "UTF8", queryString(t, conn, "SHOW server_encoding"))
	require.Equal(t, "200", queryString(t, conn, "SHOW max_connections"))
	require.Equal(t, "4GB", queryString(t, conn, "SHOW max_wal_size"), "DurableSettings")
	require.Equal(t, "off", queryString(t, conn, "SHOW wal_init_zero"), "DurableSettings")
	require.Equal(t, strconv.FormatInt(sharedBuffersFor(procmem.UsableMemory())>>20, 10)+"MB", queryString(t, conn, "SHOW shared_buffers"),
		"sized to the machine")
	_, err = conn.Exec(t.Context(), "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('x')")
	require.NoError(t, err)
	conn.Close(t.Context())

	fi, err := os.Stat(bundle.cfg.DataDir + ".password")
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	if os.Geteuid() == 0 {
		pg, err := user.Lookup("postgres")
		require.NoError(t, err)
		fi, err := os.Stat(srv.DataDir())
		require.NoError(t, err)
		require.Equal(t, pg.Uid, strconv.Itoa(int(fi.Sys().(*syscall.Stat_t).Uid)))
	}

	port := urlPort(t, srv)
	require.NoError(t, srv.Stop(t.Context()))
	require.NoError(t, srv.Stop(t.Context()), "Stop is idempotent")
	_, err = pgx.Connect(t.Context(), srv.URL())
	require.Error(t, err)

	bundle.cfg.Settings = []string{"max_wal_size=2GB"}
	srv2 := start(t, bundle.cfg)
	require.Equal(t, srv.URL(), srv2.URL(), "same password and remembered port")
	require.Equal(t, "2GB", queryString(t, connect(t, srv2), "SHOW max_wal_size"), "Config.Settings win")
	require.Equal(t, port, urlPort(t, srv2))
	require.Equal(t, "x", queryString(t, connect(t, srv2), "SELECT v FROM kept"))

	require.NoError(t, srv2.Destroy(t.Context()))
	for _, path := range []string{srv2.DataDir(), srv2.DataDir() + ".password", srv2.DataDir() + ".port", srv2.DataDir() + ".log", srv2.DataDir() + ".lock"} {
		require.NoFileExists(t, path)
		require.NoDirExists(t, path)
	}
}

func TestStartFallsBackWhenUnreachable(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("the fallback only applies when running as root")
	}
	bundle := setup(t, false)

	srv := start(t, bundle.cfg)
	require.Equal(t, fallbackDir(bundle.cfg.DataDir), srv.DataDir())
	require.Contains(t, bundle.logs.String(), "fallback")
	require.NoDirExists(t, bundle.cfg.DataDir, "nothing is created in the unreachable place")

	conn := connect(t, srv)
	require.Equal(t, "off", queryString(t, conn, "SHOW fsync"))
	require.Equal(t, "off", queryString(t, conn, "SHOW synchronous_commit"))
	require.Equal(t, "off", queryString(t, conn, "SHOW full_page_writes"))
	require.Equal(t, "1GB", queryString(t, conn, "SHOW max_wal_size"), "a test cluster keeps the default")
	_, err := conn.Exec(t.Context(), "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('y')")
	require.NoError(t, err)
	conn.Close(t.Context())
	require.NoError(t, srv.Stop(t.Context()))

	srv2 := start(t, bundle.cfg)
	require.Equal(t, srv.DataDir(), srv2.DataDir(), "the fallback is reused")
	require.Equal(t, "y", queryString(t, connect(t, srv2), "SELECT v FROM kept"))

	require.NoError(t, srv2.Destroy(t.Context()))
	require.NoDirExists(t, filepath.Dir(srv2.DataDir()))
}

func TestFallbackDir(t *testing.T) {
	t.Parallel()
	durable := fallbackDir("/root/src/hookinbox/.hookinbox/pg")
	require.Regexp(t, `^/var/lib/hookinbox/pg-[0-9a-f]{12}/pg$`, durable)
	require.Equal(t, durable, fallbackDir("/root/src/hookinbox/.hookinbox/pg"), "stable per path")
	require.NotEqual(t, durable, fallbackDir("/root/src/other/.hookinbox/pg"))

	throwaway := fallbackDir("/tmp/TestX123/001/pg")
	require.Regexp(t, `^/tmp/hookinbox-pg-[0-9a-f]{12}/pg$`, throwaway)
}

func TestStartAsRootKeepsDataDirOwner(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("only root chooses whom to run PostgreSQL as")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	uid, err := strconv.Atoi(nobody.Uid)
	require.NoError(t, err)
	gid, err := strconv.Atoi(nobody.Gid)
	require.NoError(t, err)
	bundle := setup(t, true)
	require.NoError(t, os.Mkdir(bundle.cfg.DataDir, 0o700))
	require.NoError(t, os.Chown(bundle.cfg.DataDir, uid, gid))

	srv := start(t, bundle.cfg)
	require.Equal(t, bundle.cfg.DataDir, srv.DataDir())
	require.Equal(t, "1", queryString(t, connect(t, srv), "SELECT 1"))
	fi, err := os.Stat(srv.DataDir() + ".password")
	require.NoError(t, err)
	require.Equal(t, uint32(uid), fi.Sys().(*syscall.Stat_t).Uid)
}

func TestStartAfterOrphan(t *testing.T) {
	t.Parallel()
	bundle := setup(t, os.Geteuid() != 0)
	bundle.cfg.Database = "other db"

	orphan := start(t, bundle.cfg)
	require.Contains(t, orphan.URL(), "/other%20db?")
	require.Equal(t, "other db", queryString(t, connect(t, orphan), "SELECT current_database()"))

	_, err := Start(t.Context(), bundle.cfg)
	require.ErrorIs(t, err, ErrInUse)

	// What survives a kill -9 of hookinbox: the lock is released with the
	// process, the postmaster keeps running.
	orphan.unlock()

	srv := start(t, bundle.cfg)
	select {
	case <-orphan.pm.done:
	default:
		t.Fatal("the orphaned postmaster is still running")
	}
	require.Contains(t, bundle.logs.String(), "orphaned")
	require.Equal(t, "1", queryString(t, connect(t, srv), "SELECT 1"))
	require.NoError(t, orphan.Stop(t.Context()), "stopping a server that is already gone")
	require.NoError(t, srv.Stop(t.Context()))

	// The real thing: a process that started the server is killed.
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperServer$")
	helper.Env = append(os.Environ(), "PGEMBED_HELPER_DATADIR="+bundle.cfg.DataDir)
	stdout, err := helper.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, helper.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, line, "postgres://")
	require.NoError(t, helper.Process.Kill())
	require.Error(t, helper.Wait())

	srv = start(t, bundle.cfg)
	require.Equal(t, 2, strings.Count(bundle.logs.String(), "orphaned"))
	require.Equal(t, "1", queryString(t, connect(t, srv), "SELECT 1"))
	require.NoError(t, srv.Stop(t.Context()))

	// A start that fails reports the server log.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	cfg := bundle.cfg
	cfg.Port = l.Addr().(*net.TCPAddr).Port
	_, err = Start(t.Context(), cfg)
	require.ErrorContains(t, err, "could not bind")
	require.ErrorContains(t, err, "server log")

	// The failed start released the lock.
	start(t, bundle.cfg)
}

// TestHelperServer is not a test: TestStartAfterOrphan runs the test binary
// as a stand-in for hookinbox that starts a server and gets killed.
func TestHelperServer(t *testing.T) {
	dataDir := os.Getenv("PGEMBED_HELPER_DATADIR")
	if dataDir == "" {
		t.Skip("helper process for TestStartAfterOrphan")
	}
	srv, err := Start(context.Background(), Config{DataDir: dataDir})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(srv.URL())
	time.Sleep(time.Minute)
}

func TestStartValidates(t *testing.T) {
	t.Parallel()
	_, err := Start(t.Context(), Config{})
	require.ErrorContains(t, err, "DataDir is required")

	_, err = Start(t.Context(), Config{DataDir: t.TempDir(), Port: 70000})
	require.ErrorContains(t, err, "out of range")

	_, err = Start(t.Context(), Config{DataDir: t.TempDir(), BinDir: t.TempDir()})
	require.ErrorIs(t, err, ErrNoBinaries)
}

func TestStartErrorPortTaken(t *testing.T) {
	t.Parallel()
	taken := &startError{tail: `LOG:  could not bind IPv4 address "127.0.0.1": Address already in use`}
	require.True(t, taken.portTaken())
	other := &startError{tail: `FATAL:  database files are incompatible with server`}
	require.False(t, other.portTaken())
}
