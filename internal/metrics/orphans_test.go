package metrics

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

func TestOrphansRequeuedCounts(t *testing.T) {
	t.Parallel()
	m := New(testdb.New(t), nil)
	require.Contains(t, scrape(t, m), "hookinbox_orphan_sweep_requeued_total{last_job=\"discarded\"} 0\n", "shown before the first")
	m.ObserveOrphansRequeued("discarded", 200)
	m.ObserveOrphansRequeued("none", 1)
	m.ObserveOrphansRequeued("discarded", 3)
	text := scrape(t, m)
	require.Contains(t, text, "hookinbox_orphan_sweep_requeued_total{last_job=\"discarded\"} 203\n")
	require.Contains(t, text, "hookinbox_orphan_sweep_requeued_total{last_job=\"none\"} 1\n")
	require.Contains(t, text, "hookinbox_orphan_sweep_requeued_total{last_job=\"completed\"} 0\n")
}
