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
		{admin.Attempt{Kind: "process_delivery", Tags: []string{jobs.TagOrphanSweep}}, "Orphan sweep: its job was discarded or deleted"},
	} {
		require.Equal(t, tc.want, tc.attempt.EnqueuedBy(), "%+v", tc.attempt)
	}
}

func TestAttemptCountsAsTheDeliverys(t *testing.T) {
	t.Parallel()
	n, of := admin.Attempt{Attempt: 1, MaxAttempts: 24, AttemptsBefore: 1}.DeliveryAttempt()
	require.Equal(t, [2]int{2, 25}, [2]int{n, of}, "a retry its batch job gave it: the batch job's attempt counts")
	n, of = admin.Attempt{Attempt: 3, MaxAttempts: 25}.DeliveryAttempt()
	require.Equal(t, [2]int{3, 25}, [2]int{n, of})
}
