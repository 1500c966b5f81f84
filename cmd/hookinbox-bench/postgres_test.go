package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestServerSettings(t *testing.T) {
	t.Parallel()
	require.Empty(t, serverSettings(false, 0))
	require.Equal(t, []string{"shared_preload_libraries=pg_stat_statements"}, serverSettings(true, 0))
	both := serverSettings(true, 1500*time.Microsecond)
	require.Contains(t, both, "shared_preload_libraries=pg_stat_statements,auto_explain")
	require.Contains(t, both, "auto_explain.log_min_duration=1500us")
	require.Contains(t, both, "auto_explain.log_analyze=on")
}
