package main

import (
	"context"
	"fmt"
	"os"

	"github.com/hookinbox/hookinbox/internal/pgembed"
)

// envDatabaseURL is testdb.EnvURL: a server every test binary uses
// instead of starting its own.
const envDatabaseURL = "TEST_DATABASE_URL"

// sharedDatabase starts one PostgreSQL for every go test the run makes,
// named to them by envDatabaseURL, unless the environment names one
// already. A test binary otherwise starts a server of its own, an initdb
// and a start, about two seconds of each mutation's run; each still gets
// fresh databases of its own on the shared one (internal/testdb).
func sharedDatabase(ctx context.Context) (stop func(), err error) {
	if os.Getenv(envDatabaseURL) != "" {
		return func() {}, nil
	}
	dir, err := os.MkdirTemp("", "hookinbox-mutate-pg-")
	if err != nil {
		return nil, err
	}
	// The postgres user must reach the cluster when the run is root's.
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	srv, err := pgembed.Start(ctx, pgembed.Config{DataDir: dir + "/pg", Database: "postgres"})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("the tests' PostgreSQL: %w", err)
	}
	os.Setenv(envDatabaseURL, srv.URL())
	return func() {
		os.Unsetenv(envDatabaseURL)
		srv.Destroy(context.Background())
		os.RemoveAll(dir)
	}, nil
}
