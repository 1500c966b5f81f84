package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestJobsOrphanGrace(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte("{}\n"), envOf(nil))
	require.NoError(t, err)
	require.Equal(t, 5*time.Minute, cfg.Jobs.OrphanGrace.Std(), "the default")
	cfg, err = Parse([]byte("jobs: {orphan_grace: 30m}\n"), envOf(nil))
	require.NoError(t, err)
	require.Equal(t, 30*time.Minute, cfg.Jobs.OrphanGrace.Std())
	_, err = Parse([]byte("jobs: {orphan_grace: 10s}\n"), envOf(nil))
	require.ErrorContains(t, err, "jobs.orphan_grace: 10s is under 1m")
}
