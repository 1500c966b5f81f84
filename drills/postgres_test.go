package drills

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookinbox/hookinbox/internal/pgembed"
)

// pgCluster is one embedded PostgreSQL that a drill may stop and start
// again on the same data directory and port, so hookinbox's database URL
// stays valid across the outage.
type pgCluster struct {
	parent string // our temp dir holding the cluster
	cfg    pgembed.Config
	srv    *pgembed.Server
	url    string // the "postgres" database; drills make their own
}

// newPGCluster starts a throwaway cluster. port 0 picks a free one, which
// later starts then reuse.
func newPGCluster(ctx context.Context, port int) (*pgCluster, error) {
	// MkdirTemp makes a 0700 directory that the postgres user (we run as
	// root) cannot enter, which would send pgembed to a fallback directory.
	parent, err := os.MkdirTemp("", "hookinbox-drills-pg-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(parent, 0o755); err != nil {
		os.RemoveAll(parent)
		return nil, err
	}
	c := &pgCluster{parent: parent, cfg: pgembed.Config{
		DataDir: filepath.Join(parent, "pg"), Database: "postgres", Port: port,
	}}
	if err := c.start(ctx); err != nil {
		os.RemoveAll(parent)
		return nil, err
	}
	return c, nil
}

// start (re)starts the cluster on its data directory and port.
func (c *pgCluster) start(ctx context.Context) error {
	srv, err := pgembed.Start(ctx, c.cfg)
	if err != nil {
		return fmt.Errorf("start PostgreSQL: %w", err)
	}
	c.srv, c.url = srv, srv.URL()
	if c.cfg.Port == 0 {
		u, _ := url.Parse(c.url)
		fmt.Sscanf(u.Port(), "%d", &c.cfg.Port)
	}
	return nil
}

// stop is a fast shutdown: sessions are disconnected, transactions in
// progress are rolled back.
func (c *pgCluster) stop(ctx context.Context) error {
	return c.srv.Stop(ctx)
}

func (c *pgCluster) destroy() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = c.srv.Destroy(ctx)
	os.RemoveAll(c.parent)
}

var dbCounter atomic.Int64

// newDatabase creates an empty database on c for t, dropped when t ends
// (with any sessions a killed hookinbox left behind), and returns its URL.
// hookinbox migrates it when it starts.
func (c *pgCluster) newDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("drill_%d_%d", os.Getpid(), dbCounter.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Logf("drop database %s: %v", name, err)
		}
	})
	u, _ := url.Parse(c.url)
	u.Path = "/" + name
	return u.String()
}

func (c *pgCluster) exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, c.url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// openPool opens the drill's own pool on dbURL, for the audit. It connects
// lazily, so it survives a database outage.
func openPool(t testing.TB, dbURL string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}
