package jobs_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/jobs"
)

// nextKeyGeneration is the table of the generation after the first.
var nextKeyGeneration = "inbox_key_g" + strconv.FormatInt(jobs.KeyGenerationIDs, 10)

// openKeyGeneration opens the next generation of the inbox's keys now.
func (b *retentionBundle) openKeyGeneration(t *testing.T) {
	t.Helper()
	name, err := jobs.OpenKeyGeneration(context.Background(), b.pool, 0, time.Now())
	require.NoError(t, err)
	require.NotEmpty(t, name)
}

func (b *retentionBundle) resend(t *testing.T, id string, d ingest.Delivery) ingest.Recorded {
	t.Helper()
	if d.Source == "" {
		d = ingest.Delivery{Source: "github", DeliveryID: id, EventType: "push", Headers: http.Header{}, Payload: []byte(`{"n":"` + id + `"}`)}
	}
	rec, err := b.inbox.Record(context.Background(), d)
	require.NoError(t, err)
	return rec
}

// The next generation of keys opens once the current one has been open
// for its span: the ids skip to it, its first inbox partition is made
// with it, and new deliveries' keys go there.
func TestAKeyGenerationOpensOnceTheCurrentHasServedItsSpan(t *testing.T) {
	t.Parallel()
	b := setupRetention(t)
	ctx := context.Background()
	name, err := jobs.OpenKeyGeneration(ctx, b.pool, time.Hour, time.Now())
	require.NoError(t, err)
	require.Empty(t, name, "the first opened with the migration, just now")

	name, err = jobs.OpenKeyGeneration(ctx, b.pool, time.Hour, time.Now().Add(2*time.Hour))
	require.NoError(t, err)
	require.Equal(t, nextKeyGeneration, name)
	id := b.row(t, "github", "new", "processed", 0)
	require.EqualValues(t, jobs.KeyGenerationIDs, id)
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM "+nextKeyGeneration))
	require.Contains(t, b.partitions(t), "inbox_p"+strconv.FormatInt(jobs.KeyGenerationIDs, 10))
	require.Zero(t, b.count(t, "SELECT count(*) FROM inbox_overflow"))

	name, err = jobs.OpenKeyGeneration(ctx, b.pool, time.Hour, time.Now())
	require.NoError(t, err)
	require.Empty(t, name, "opened just now")
}

// A delivery whose key is in an older generation is a duplicate when it
// comes again in the next: by its id, or by its body where the source
// dedupes bodies; alone or in a batch.
func TestADuplicateIsFoundInAnOlderKeyGeneration(t *testing.T) {
	t.Parallel()
	b := setupRetention(t)
	ctx := context.Background()
	first := b.row(t, "github", "before", "processed", 0)
	body := ingest.Delivery{Source: "shopify", DeliveryID: "body-1", EventType: "orders", Headers: http.Header{}, Payload: []byte(`{"order":1}`), DedupBody: true}
	byBody := b.resend(t, "", body)
	require.Equal(t, ingest.OutcomeAccepted, byBody.Outcome)
	b.openKeyGeneration(t)

	rec := b.resend(t, "before", ingest.Delivery{})
	require.Equal(t, ingest.Recorded{ID: first, Outcome: ingest.OutcomeDuplicate}, rec)
	body.DeliveryID = "body-2"
	rec = b.resend(t, "", body)
	require.Equal(t, ingest.OutcomeDuplicate, rec.Outcome)
	require.Equal(t, "body-1", rec.DuplicateOf)

	var recs []ingest.Recorded
	err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		var err error
		recs, _, err = b.inbox.RecordManyTx(ctx, tx, []ingest.Delivery{
			{Source: "github", DeliveryID: "before", EventType: "push", Headers: http.Header{}, Payload: []byte(`{"n":"before"}`)},
			{Source: "shopify", DeliveryID: "body-3", EventType: "orders", Headers: http.Header{}, Payload: []byte(`{"order":1}`), DedupBody: true},
			{Source: "github", DeliveryID: "after", EventType: "push", Headers: http.Header{}, Payload: []byte(`{}`)},
		})
		return err
	})
	require.NoError(t, err)
	require.Equal(t, []ingest.Outcome{ingest.OutcomeDuplicate, ingest.OutcomeDuplicate, ingest.OutcomeAccepted},
		[]ingest.Outcome{recs[0].Outcome, recs[1].Outcome, recs[2].Outcome})
	require.Equal(t, 3, b.count(t, "SELECT count(*) FROM inbox"))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM "+nextKeyGeneration))
}

// A generation opens between ingest's transactions, never across one: it
// waits for an insert in flight, and ingest waits for it. The delivery
// being inserted as the generation opens is a duplicate when it comes
// again in the new one, not stored twice.
func TestAKeyGenerationOpensBetweenInsertsNeverAcrossOne(t *testing.T) {
	t.Parallel()
	for _, batch := range []bool{false, true} {
		name := "RecordTx"
		if batch {
			name = "RecordManyTx"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			openBetweenInserts(t, batch)
		})
	}
}

func openBetweenInserts(t *testing.T, batch bool) {
	b := setupRetention(t)
	ctx := context.Background()
	d := ingest.Delivery{Source: "github", DeliveryID: "in-flight", EventType: "push", Headers: http.Header{}, Payload: []byte(`{}`)}
	tx, err := b.pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck // committed below
	var first ingest.Recorded
	if batch {
		recs, _, err := b.inbox.RecordManyTx(ctx, tx, []ingest.Delivery{d})
		require.NoError(t, err)
		first = recs[0]
	} else {
		first, err = b.inbox.RecordTx(ctx, tx, d)
		require.NoError(t, err)
	}

	opened := make(chan error, 1)
	go func() {
		_, err := jobs.OpenKeyGeneration(ctx, b.pool, 0, time.Now())
		opened <- err
	}()
	testdb.WaitLockWaiters(t, b.pool, 1, "the generation waits for the insert in flight")
	again := make(chan ingest.Recorded, 1)
	go func() {
		rec, err := b.inbox.Record(ctx, d)
		if err != nil {
			t.Errorf("record again: %v", err)
		}
		again <- rec
	}()
	testdb.WaitLockWaiters(t, b.pool, 2, "ingest waits for the generation")
	require.NoError(t, tx.Commit(ctx))

	require.NoError(t, <-opened)
	rec := <-again
	require.Equal(t, ingest.OutcomeDuplicate, rec.Outcome)
	require.Equal(t, first.ID, rec.ID)
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM inbox WHERE delivery_id = 'in-flight'"))
}

// A generation before the current one stays while the inbox holds one of
// its deliveries (here one that failed: retention keeps it), and a resend
// of that delivery is a duplicate. Once the inbox holds none, the
// generation goes whole, with the inbox partitions of its ids, and a
// resend is new.
func TestRetentionDropsAKeyGenerationOnceTheInboxHoldsNoneOfIt(t *testing.T) {
	t.Parallel()
	b := setupRetention(t)
	b.row(t, "github", "expired", "processed", 40*day)
	kept := b.row(t, "github", "failed", "failed", 40*day)
	b.openKeyGeneration(t)
	b.row(t, "github", "new", "processed", 0)

	res := b.retention(t)
	require.Zero(t, res.KeyGenerationsDropped)
	require.Equal(t, []string{"failed", "new"}, b.remaining(t))
	require.Equal(t, ingest.OutcomeDuplicate, b.resend(t, "failed", ingest.Delivery{}).Outcome)

	testdb.SetStatus(t, b.pool, "processed", kept)
	res = b.retention(t)
	require.EqualValues(t, 1, res.PartitionsDropped)
	require.EqualValues(t, 1, res.KeyGenerationsDropped)
	require.Equal(t, []string{"inbox_overflow", "inbox_p" + strconv.FormatInt(jobs.KeyGenerationIDs, 10)}, b.partitions(t))
	require.Zero(t, b.count(t, "SELECT count(*) FROM pg_class WHERE relname IN ('inbox_key_g0', 'inbox_p0', 'inbox_p1', 'inbox_outcome_p0', 'inbox_outcome_p1')"),
		"detached, then dropped: %v", b.names(t, "SELECT relname FROM pg_class WHERE relname ~ '^inbox_(key_g|p|outcome_p)[0-9]+$'"))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM inbox_key_generation"))
	require.Equal(t, ingest.OutcomeAccepted, b.resend(t, "failed", ingest.Delivery{}).Outcome)
}

// The current generation stays though the inbox holds none of its
// deliveries (their partition went whole): the dropped deliveries' keys
// are still there, so a resend of one is a duplicate, and new deliveries
// are stored in it.
func TestTheCurrentKeyGenerationStaysThoughTheInboxHoldsNoneOfIt(t *testing.T) {
	t.Parallel()
	b := setupRetention(t)
	first := b.row(t, "github", "expired", "processed", 40*day)
	b.closeFirstPartition(t)

	res := b.retention(t)
	require.EqualValues(t, 1, res.PartitionsDropped)
	require.Zero(t, res.KeyGenerationsDropped)
	require.Empty(t, b.remaining(t))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM inbox_key_generation"))
	require.Equal(t, ingest.Recorded{ID: first, Outcome: ingest.OutcomeDuplicate}, b.resend(t, "expired", ingest.Delivery{}))
	require.Equal(t, ingest.OutcomeAccepted, b.resend(t, "new", ingest.Delivery{}).Outcome)
	require.Equal(t, []string{"new"}, b.remaining(t))
}

func (b *retentionBundle) names(t *testing.T, sql string) []string {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), sql)
	require.NoError(t, err)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return names
}

// A generation before the current one goes once the inbox holds none of
// its deliveries, though an earlier one is still held.
func TestALaterKeyGenerationGoesThoughAnEarlierOneIsHeld(t *testing.T) {
	t.Parallel()
	b := setupRetention(t)
	b.row(t, "github", "failed", "failed", 40*day)
	b.openKeyGeneration(t)
	b.row(t, "github", "expired", "processed", 40*day)
	b.openKeyGeneration(t)

	res := b.retention(t)
	require.EqualValues(t, 1, res.KeyGenerationsDropped)
	require.Equal(t, []string{"failed"}, b.remaining(t))
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM pg_class WHERE relname = 'inbox_key_g0'"))
	require.Zero(t, b.count(t, "SELECT count(*) FROM pg_class WHERE relname = '"+nextKeyGeneration+"'"))
	require.Equal(t, ingest.OutcomeDuplicate, b.resend(t, "failed", ingest.Delivery{}).Outcome)
}

// The partition made ahead for the next generation's first ids is not the
// newest while that generation is not open: should opening it fail for
// long, the current generation's ids still get their next partition.
func TestAPartitionMadeForTheNextKeyGenerationLeavesTheCurrentOneItsNext(t *testing.T) {
	t.Parallel()
	b := setupRetention(t)
	ctx := context.Background()
	next := strconv.FormatInt(jobs.KeyGenerationIDs, 10)
	_, err := b.pool.Exec(ctx, "SELECT inbox_partition_create("+next+", "+next+" + 1000); SELECT setval('inbox_id_seq', 600000)")
	require.NoError(t, err)
	name, lo, _, err := jobs.EnsurePartition(ctx, b.pool, time.Hour, 1000, time.Now())
	require.NoError(t, err)
	require.Equal(t, "inbox_p1000001", name)
	require.EqualValues(t, 1000001, lo)
}

// An open that moved the sequence into the next generation and did not
// commit (setval is not undone) counts as opened then: the generation
// after it waits its span.
func TestAKeyGenerationTheSequenceReachedIsOpen(t *testing.T) {
	t.Parallel()
	b := setupRetention(t)
	ctx := context.Background()
	next := strconv.FormatInt(jobs.KeyGenerationIDs, 10)
	_, err := b.pool.Exec(ctx, "SELECT inbox_key_generation_create("+next+", 2 * "+next+"); SELECT setval('inbox_id_seq', "+next+", false)")
	require.NoError(t, err)
	name, err := jobs.OpenKeyGeneration(ctx, b.pool, 0, time.Now())
	require.NoError(t, err)
	require.Empty(t, name, "recorded as open, none opened after it")
	require.Equal(t, 1, b.count(t, "SELECT count(*) FROM inbox_key_generation WHERE lo = "+next+" AND opened_at IS NOT NULL"))
	require.EqualValues(t, jobs.KeyGenerationIDs, b.row(t, "github", "first", "processed", 0))
}

// A sequence that caches ids per session would go on handing out the old
// generation's ids after an open: the opener refuses, names the fix and
// opens nothing.
func TestAKeyGenerationDoesNotOpenOnACachingSequence(t *testing.T) {
	t.Parallel()
	b := setupRetention(t)
	ctx := context.Background()
	_, err := b.pool.Exec(ctx, "ALTER SEQUENCE inbox_id_seq CACHE 20")
	require.NoError(t, err)
	name, err := jobs.OpenKeyGeneration(ctx, b.pool, 0, time.Now())
	require.ErrorContains(t, err, "ALTER SEQUENCE inbox_id_seq CACHE 1")
	require.Empty(t, name)
	require.Zero(t, b.count(t, "SELECT count(*) FROM inbox_key_generation WHERE lo = "+strconv.FormatInt(jobs.KeyGenerationIDs, 10)))
}

// A generation whose one delivery retention keeps is at its first id
// stays: the delivery's key is there, so a resend of it is a duplicate.
func TestAKeyGenerationHeldByItsFirstIDStays(t *testing.T) {
	t.Parallel()
	b := setupRetention(t)
	b.openKeyGeneration(t)
	first := b.row(t, "github", "first", "failed", 40*day)
	require.EqualValues(t, jobs.KeyGenerationIDs, first, "the generation's first id")
	b.openKeyGeneration(t)
	b.row(t, "github", "new", "processed", 0)

	b.retention(t)
	require.Equal(t, []string{"first", "new"}, b.remaining(t))
	require.Equal(t, ingest.OutcomeDuplicate, b.resend(t, "first", ingest.Delivery{}).Outcome)
}
