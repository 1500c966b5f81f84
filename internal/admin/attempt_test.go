package admin_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/jobs"
)

// TestAttemptEnqueuedBy covers the follow-up a batch's job gives a
// delivery, which the end-to-end attempts test cannot make without a
// handler that fails or a busy resource.
func TestAttemptEnqueuedBy(t *testing.T) {
	t.Parallel()
	replay := int64(7)
	for _, tc := range []struct {
		attempt admin.Attempt
		want    string
	}{
		{admin.Attempt{Kind: "process_delivery"}, "Ingest"},
		{admin.Attempt{Kind: "process_deliveries"}, "Ingest, with its batch"},
		{admin.Attempt{Kind: "process_delivery", Tags: []string{jobs.TagFromBatch}}, "Its batch, alone"},
		{admin.Attempt{Kind: "process_delivery", ReplayID: &replay}, "Replay #7"},
	} {
		require.Equal(t, tc.want, tc.attempt.EnqueuedBy(), "%+v", tc.attempt)
	}
}
