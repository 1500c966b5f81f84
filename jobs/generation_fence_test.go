package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/jobs"
)

// work runs a job of kind through g's middleware and reports whether it
// ran or was snoozed.
func work(t *testing.T, g *jobs.Generation, kind string) (ran, snoozed bool) {
	t.Helper()
	job := &rivertype.JobRow{ID: 1, Kind: kind, Metadata: []byte(`{}`)}
	err := g.Middleware().Work(context.Background(), job, func(context.Context) error { ran = true; return nil })
	var snooze *rivertype.JobSnoozeError
	snoozed = errors.As(err, &snooze)
	require.True(t, err == nil || snoozed, "only a snooze: %v", err)
	return ran, snoozed
}

const kindOther = "retention"

var processingKinds = []string{jobs.ProcessDeliveryArgs{}.Kind(), jobs.ProcessDeliveriesArgs{}.Kind()}

// requireProcesses asserts that g runs processing jobs.
func requireProcesses(t *testing.T, g *jobs.Generation, msg string) {
	t.Helper()
	for _, kind := range processingKinds {
		ran, _ := work(t, g, kind)
		require.True(t, ran, "%s: %s runs", msg, kind)
	}
}

// requireFenced asserts that g snoozes processing jobs and runs others.
func requireFenced(t *testing.T, g *jobs.Generation, msg string) {
	t.Helper()
	for _, kind := range processingKinds {
		_, snoozed := work(t, g, kind)
		require.True(t, snoozed, "%s: %s snoozed", msg, kind)
	}
	ran, _ := work(t, g, kindOther)
	require.True(t, ran, "%s: other jobs run", msg)
}

// A process whose looks have stopped (its look loop ended at shutdown
// while River still works, or a pause, a partition or a stuck pool keeps
// it from the database) processes nothing on its last answer once that
// answer is older than 6 looks, before the processes of a newer
// configuration count it gone (its live window, 10 looks) and report
// ready without it. Its other jobs run; a look that succeeds lifts the
// fence.
func TestAProcessWhoseLooksStoppedProcessesNothing(t *testing.T) {
	t.Parallel()
	b := newSettleBundle(t)
	const every = 500 * time.Millisecond
	g, stop := b.start("v1", every, nil)
	requireProcesses(t, g, "looked just now")

	stop()
	require.Eventually(t, func() bool { _, snoozed := work(t, g, processingKinds[0]); return snoozed },
		15*time.Second, 10*time.Millisecond, "fenced once its last look is too old")
	fencedAt := time.Now()
	var liveUntil time.Time
	require.NoError(t, b.pool.QueryRow(context.Background(),
		"SELECT live_until FROM worker_process WHERE fingerprint = 'v1'").Scan(&liveUntil))
	require.True(t, fencedAt.Before(liveUntil.Add(-every)), "fenced at %s, a look or more before others count it gone at %s "+
		"(a margin for a publish's commit and the database's clock)", fencedAt, liveUntil)
	requireFenced(t, g, "looks stopped")

	require.NoError(t, g.Cycle(context.Background()))
	requireProcesses(t, g, "looked again")
}

// A replica of the older configuration that restarts, while another runs
// on, just before a newer one starts (its Prepare found nothing newer) is
// unknown to the newer one until its first look, so the newer one may
// report ready first: until that look it processes nothing, and the look
// finds it outdated.
func TestAReplicaProcessesNothingBeforeItsFirstLook(t *testing.T) {
	t.Parallel()
	b := newSettleBundle(t)
	const every = 50 * time.Millisecond
	b.start("v1", every, nil) // the replica that runs on
	replica, err := jobs.NewGeneration(b.pool, jobs.GenerationConfig{Fingerprint: "v1", Every: every})
	require.NoError(t, err)
	require.NoError(t, replica.Prepare(context.Background()))
	require.False(t, replica.Outdated(), "nothing newer ran at its Prepare")

	newer, _ := b.start("v2", every, nil)
	require.NoError(t, b.settle(newer, 10*time.Second), "the replica has said nothing yet")
	requireFenced(t, replica, "before its first look")

	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	require.NoError(t, replica.Start(ctx))
	require.True(t, replica.Outdated(), "its first look finds v2")
	_, snoozed := work(t, replica, processingKinds[0])
	require.True(t, snoozed, "outdated: left to v2")
}

// The snoozes a fence made do not count toward jobs.MaxDeferrals: a job
// fenced often is not thereby processed by an outdated process under its
// older configuration; one its outdated processes deferred that often is.
func TestFencedSnoozesDoNotCountTowardMaxDeferrals(t *testing.T) {
	t.Parallel()
	b := newSettleBundle(t)
	const every = time.Minute // looks made by the test
	older, _ := b.start("v1", every, nil)
	b.start("v2", every, nil)
	require.NoError(t, older.Cycle(context.Background()))
	require.True(t, older.Outdated())
	run := func(metadata string) (ran bool) {
		job := &rivertype.JobRow{ID: 1, Kind: processingKinds[0], Metadata: []byte(metadata)}
		_ = older.Middleware().Work(context.Background(), job, func(context.Context) error { ran = true; return nil })
		return ran
	}
	require.False(t, run(fmt.Sprintf(`{"snoozes": %d, "hookinbox_fenced": 1}`, jobs.MaxDeferrals)), "one of them fenced: deferred again")
	require.True(t, run(fmt.Sprintf(`{"snoozes": %d}`, jobs.MaxDeferrals)), "deferred that often: processed")
}
