package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

// A body over max_body_bytes got "write: connection reset by peer": the
// service answers 413 before reading it and closes. send refuses it
// itself, with the service's code and the key to change.
func TestSendBodyOverMaxBodyBytes(t *testing.T) {
	t.Parallel()
	url := testdb.URL(t)
	b := setup(t, url)
	b.serve(t)
	big := filepath.Join(t.TempDir(), "big.json")
	require.NoError(t, os.WriteFile(big, []byte(`{"pad":"`+strings.Repeat("x", config.DefaultMaxBodyBytes)+`"}`), 0o600))

	code, out := b.send(t, "--source", "github", "--event", "push", "--file", big)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "payload_too_large: the body is 5242890 bytes, over max_body_bytes (5242880) in "+b.configPath)
	require.Contains(t, out, "nothing was sent")

	// Sent anyway to a server of the caller's choosing: the service's
	// answer, or the reset with what it means.
	code, out = b.send(t, "--source", "github", "--event", "push", "--file", big, "--url", "http://"+b.listen+"/webhooks/github")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "413")
	require.Contains(t, out, "payload_too_large")
	require.Contains(t, out, "over max_body_bytes (5242880)")

	pool, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	defer pool.Close()
	var rows int
	require.NoError(t, pool.QueryRow(context.Background(), "SELECT count(*) FROM inbox").Scan(&rows))
	require.Zero(t, rows)
}
