package jobs_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testlog"
	"github.com/hookinbox/hookinbox/jobs"
)

// settleBundle starts Generations on one database.
type settleBundle struct {
	t    *testing.T
	pool *pgxpool.Pool
}

func newSettleBundle(t *testing.T) *settleBundle {
	t.Helper()
	return &settleBundle{t: t, pool: testdb.New(t)}
}

// start starts a Generation of fp looking every every; stop ends it as a
// killed process ends: it says nothing more.
func (b *settleBundle) start(fp string, every time.Duration, logger *slog.Logger) (g *jobs.Generation, stop context.CancelFunc) {
	b.t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	b.t.Cleanup(stop)
	g, err := jobs.StartGeneration(ctx, b.pool, jobs.GenerationConfig{Fingerprint: fp, Every: every, Logger: logger})
	require.NoError(b.t, err)
	return g, stop
}

// settle runs g's Settle within d.
func (b *settleBundle) settle(g *jobs.Generation, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return g.Settle(ctx)
}

func (b *settleBundle) exec(sql string) {
	b.t.Helper()
	_, err := b.pool.Exec(context.Background(), sql)
	require.NoError(b.t, err)
}

// An older process whose looks come late (one every 2 s here, as a slow
// database or a long pause makes them) holds the new process's Settle
// until it has looked: when Settle returns it has seen the new
// configuration, and Settle did not wait out its live window (20 s).
func TestSettleWaitsForALateLook(t *testing.T) {
	t.Parallel()
	b := newSettleBundle(t)
	older, _ := b.start("v1", 2*time.Second, nil)
	begun := time.Now()
	newer, _ := b.start("v2", 50*time.Millisecond, nil)
	require.NoError(t, b.settle(newer, 15*time.Second))
	require.True(t, older.Outdated(), "settled once the older process had seen v2")
	require.Less(t, time.Since(begun), 15*time.Second)
}

// An older process that stops reporting before it sees the new
// configuration (killed, say) holds Settle for its live window at most
// (1 s here); Settle then goes on without it and says so.
func TestSettleGoesOnWithoutAProcessThatWentSilent(t *testing.T) {
	t.Parallel()
	b := newSettleBundle(t)
	_, stopOlder := b.start("v1", 100*time.Millisecond, nil)
	stopOlder()
	logger, logs := testlog.New(t)
	newer, _ := b.start("v2", 50*time.Millisecond, logger)
	require.NoError(t, b.settle(newer, 15*time.Second), "the silent process counts as gone")
	require.Contains(t, logs.String(), "a process of another configuration stopped reporting before it saw this one: counted as gone")
	require.Contains(t, logs.String(), "its=v1")
	require.Regexp(t, `host=\S+:\d+ `, logs.String(), "the log names the silent process's host and pid")
}

// An older process that stopped and left (its River client stopped)
// before it saw the new configuration, as one replaced by a restart does,
// is not waited for, though it would count as running for an hour yet.
func TestSettleDoesNotWaitForAProcessThatLeft(t *testing.T) {
	t.Parallel()
	b := newSettleBundle(t)
	older, stopOlder := b.start("v1", 6*time.Minute, nil)
	stopOlder()
	require.NoError(t, older.Leave(context.Background()))
	logger, logs := testlog.New(t)
	newer, _ := b.start("v2", 50*time.Millisecond, logger)
	require.NoError(t, b.settle(newer, 10*time.Second))
	require.NotContains(t, logs.String(), "stopped reporting")
}

// A configuration run by a process of an older binary, which records no
// looks, holds Settle for two of this process's looks, the wait Settle
// made before it waited for evidence.
func TestSettleGivesAnOlderBinaryTwoLooks(t *testing.T) {
	t.Parallel()
	b := newSettleBundle(t)
	b.exec("INSERT INTO worker_config (fingerprint, first_seen_at, seen_at) VALUES ('v0', now(), now())")
	begun := time.Now()
	newer, _ := b.start("v1", 200*time.Millisecond, nil)
	require.NoError(t, b.settle(newer, 15*time.Second))
	require.GreaterOrEqual(t, time.Since(begun), 400*time.Millisecond)
}

// A process that saw this configuration the newest after it was first
// seen need not look again (an older replica shutting down, whose looks
// have ended): a replica of the configuration settles at once. A sighting
// from before the configuration was deployed again (it ran nowhere for
// its live window meanwhile) does not count.
func TestSettleTakesASightingSinceTheConfigurationWasFirstSeen(t *testing.T) {
	t.Parallel()
	b := newSettleBundle(t)
	const every = 50 * time.Millisecond
	_, stopFirst := b.start("v2", every, nil)
	b.exec(`INSERT INTO worker_process (id, host, fingerprint, seen_at, live_until, looked_at, newest)
		VALUES ('older', 'older:1', 'v1', now(), now() + interval '1 hour', now(), 'v2')`)
	replica, stopReplica := b.start("v2", every, nil)
	require.NoError(t, b.settle(replica, 10*time.Second), "the older process saw v2 after v2 was first seen")

	stopFirst()
	stopReplica()
	require.Eventually(t, func() bool {
		var stale bool
		err := b.pool.QueryRow(context.Background(),
			"SELECT seen_at < now() - interval '1 second' FROM worker_config WHERE fingerprint = 'v2'").Scan(&stale)
		return err == nil && stale
	}, 10*time.Second, every, "v2 ran nowhere for its live window")
	again, _ := b.start("v2", every, nil)
	require.ErrorIs(t, b.settle(again, time.Second), context.DeadlineExceeded,
		"v2 deployed again: the older process's sighting predates it")
}

// The rows of processes gone for an hour go at the next publish: the
// table holds what runs and what ran lately, not every start.
func TestGoneProcessesAreForgotten(t *testing.T) {
	t.Parallel()
	b := newSettleBundle(t)
	b.exec(`INSERT INTO worker_process (id, host, fingerprint, seen_at, live_until) VALUES
		('gone', 'gone:1', 'v0', now() - interval '2 hours', now() - interval '61 minutes'),
		('lately', 'lately:1', 'v0', now() - interval '2 minutes', now() - interval '1 minute')`)
	b.start("v1", time.Hour, nil)
	rows, err := b.pool.Query(context.Background(), "SELECT id FROM worker_process WHERE id IN ('gone', 'lately')")
	require.NoError(t, err)
	kept, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"lately"}, kept, "gone for a minute: kept; for an hour: forgotten")
}
