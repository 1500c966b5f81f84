package metrics

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

func TestDeferralsCount(t *testing.T) {
	t.Parallel()
	m := New(testdb.New(t), nil)
	require.Contains(t, scrape(t, m), "hookinbox_processing_deferrals_total{outcome=\"processed_outdated\"} 0\n", "shown before the first")
	m.ObserveDeferral("deferred")
	m.ObserveDeferral("deferred")
	require.Contains(t, scrape(t, m), "hookinbox_processing_deferrals_total{outcome=\"deferred\"} 2\n")
}
