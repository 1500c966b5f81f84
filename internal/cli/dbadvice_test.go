package cli

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/pgsettings"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

// The test server runs with synchronous_commit=off and a 1GB max_wal_size:
// serve on it says, before it is ready, that the first can lose
// acknowledged deliveries and the second slows commits.
func TestServeWarnsOfServerSettings(t *testing.T) {
	t.Parallel()
	b := setup(t, testdb.URL(t))
	b.serve(t)
	log := b.stderr.String()
	require.Contains(t, log, `level=WARN msg="PostgreSQL setting can lose acknowledged deliveries" role=all setting=synchronous_commit value=off want=on`)
	require.Contains(t, log, `level=WARN msg="PostgreSQL setting slows commits under load" role=all setting=max_wal_size value=1GB want=4GB`)
}

// On the embedded server only what can lose deliveries is a warning.
func TestAdviceLevel(t *testing.T) {
	t.Parallel()
	durable, slow := pgsettings.Advice{Durable: true}, pgsettings.Advice{}
	require.Equal(t, slog.LevelWarn, adviceLevel(durable, true))
	require.Equal(t, slog.LevelWarn, adviceLevel(durable, false))
	require.Equal(t, slog.LevelWarn, adviceLevel(slow, false))
	require.Equal(t, slog.LevelInfo, adviceLevel(slow, true))
}

func TestLocalHost(t *testing.T) {
	t.Parallel()
	for host, local := range map[string]bool{"/tmp": true, "localhost": true, "127.0.0.1": true, "::1": true,
		"db.internal": false, "10.0.0.5": false, "": false} {
		require.Equal(t, local, localHost(host), host)
	}
}
