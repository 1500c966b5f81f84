package ingest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
)

// recordWays are the transactional forms of Record. Each records n
// deliveries in tx and returns their inbox rows' and jobs' ids.
var recordWays = []struct {
	name   string
	record func(t *testing.T, inbox *ingest.Inbox, tx pgx.Tx, n int) (rows, jobIDs []int64)
}{
	{"RecordTx", func(t *testing.T, inbox *ingest.Inbox, tx pgx.Tx, n int) (rows, jobIDs []int64) {
		for i := range n {
			rec, err := inbox.RecordTx(context.Background(), tx, pushDelivery(fmt.Sprintf("tx-%d", i), fmt.Sprintf(`{"n":%d}`, i)))
			require.NoError(t, err)
			require.Equal(t, ingest.OutcomeAccepted, rec.Outcome)
			rows, jobIDs = append(rows, rec.ID), append(jobIDs, rec.JobID)
		}
		return rows, jobIDs
	}},
	{"RecordManyTx", func(t *testing.T, inbox *ingest.Inbox, tx pgx.Tx, n int) (rows, jobIDs []int64) {
		return recordMany(t, inbox, tx, n)
	}},
	{"RecordManyTx/JobPerBatch", func(t *testing.T, inbox *ingest.Inbox, tx pgx.Tx, n int) (rows, jobIDs []int64) {
		inbox.JobPerBatch = true
		return recordMany(t, inbox, tx, n)
	}},
}

func recordMany(t *testing.T, inbox *ingest.Inbox, tx pgx.Tx, n int) (rows, jobIDs []int64) {
	t.Helper()
	var ds []ingest.Delivery
	for i := range n {
		ds = append(ds, pushDelivery(fmt.Sprintf("many-%d", i), fmt.Sprintf(`{"n":%d}`, i)))
	}
	recs, errs, err := inbox.RecordManyTx(context.Background(), tx, ds)
	require.NoError(t, err)
	for i, rec := range recs {
		require.NoError(t, errs[i])
		require.Equal(t, ingest.OutcomeAccepted, rec.Outcome)
		rows, jobIDs = append(rows, rec.ID), append(jobIDs, rec.JobID)
	}
	return rows, jobIDs
}

// querier is a transaction or the pool: who is looking.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// stored counts the inbox rows and River jobs with these ids that q sees.
func stored(t *testing.T, q querier, rows, jobIDs []int64) (inboxRows, jobRows int) {
	t.Helper()
	require.NoError(t, q.QueryRow(context.Background(),
		`SELECT (SELECT count(*) FROM inbox WHERE id = ANY($1)), (SELECT count(*) FROM river_job WHERE id = ANY($2))`,
		rows, jobIDs).Scan(&inboxRows, &jobRows))
	return inboxRows, jobRows
}

// distinct is how many different ids ids holds (a batch job is shared).
func distinct(ids []int64) int {
	seen := map[int64]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	return len(seen)
}

// openRecord records three deliveries in a transaction it leaves open, and
// checks that the rows and their jobs are in that transaction and nowhere
// else yet: a job inserted in a transaction of its own would already be
// visible to the pool.
func openRecord(t *testing.T, record func(*testing.T, *ingest.Inbox, pgx.Tx, int) ([]int64, []int64)) (*pgxpool.Pool, pgx.Tx, []int64, []int64) {
	t.Helper()
	ctx := context.Background()
	pool, inbox := newInbox(t)
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback(ctx) })
	rows, jobIDs := record(t, inbox, tx, 3)
	for _, id := range jobIDs {
		require.NotZero(t, id, "every accepted delivery has a job")
	}
	inTx, jobsInTx := stored(t, tx, rows, jobIDs)
	require.Equal(t, 3, inTx, "the rows, seen from their own transaction")
	require.Equal(t, distinct(jobIDs), jobsInTx, "the jobs, seen from the rows' transaction")
	outside, jobsOutside := stored(t, pool, rows, jobIDs)
	require.Zero(t, outside, "rows visible outside their uncommitted transaction")
	require.Zero(t, jobsOutside, "jobs visible outside the uncommitted transaction of their rows: inserted in one of their own")
	return pool, tx, rows, jobIDs
}

// A caller that rolls back after RecordTx or RecordManyTx leaves neither a
// row nor a job: a job with no row would process nothing, and the
// provider's retry would be enqueued a second time.
func TestRecordTxRollsBackRowAndJobTogether(t *testing.T) {
	t.Parallel()
	for _, way := range recordWays {
		t.Run(way.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			pool, tx, rows, jobIDs := openRecord(t, way.record)
			require.NoError(t, tx.Rollback(ctx))
			var inboxRows, jobRows int
			require.NoError(t, pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM inbox), (SELECT count(*) FROM river_job)`).
				Scan(&inboxRows, &jobRows))
			require.Zero(t, inboxRows, "inbox rows after the rollback (rows %v)", rows)
			require.Zero(t, jobRows, "river_job rows after the rollback (jobs %v)", jobIDs)
		})
	}
}

// And once the caller commits, both are there, each job naming its rows.
func TestRecordTxCommitsRowAndJobTogether(t *testing.T) {
	t.Parallel()
	for _, way := range recordWays {
		t.Run(way.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			pool, tx, rows, jobIDs := openRecord(t, way.record)
			require.NoError(t, tx.Commit(ctx))
			inboxRows, jobRows := stored(t, pool, rows, jobIDs)
			require.Equal(t, 3, inboxRows)
			require.Equal(t, distinct(jobIDs), jobRows)
			var covered int
			require.NoError(t, pool.QueryRow(ctx, `SELECT count(DISTINCT i.id) FROM inbox i
				JOIN delivery_job_ids(i.id) AS d (job_id) ON d.job_id = ANY($2)
				WHERE i.id = ANY($1)`, rows, jobIDs).Scan(&covered))
			require.Equal(t, 3, covered, "every row has its job")
		})
	}
}

// Recording needs READ COMMITTED: a snapshot taken before the transaction
// held the key generations' lock could miss a key stored in an older
// generation as a new one opened. RecordTx and RecordManyTx refuse any
// other level and record nothing; Record asks for READ COMMITTED itself,
// whatever the database's default.
func TestRecordingNeedsReadCommitted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, inbox := newInbox(t)
	for _, level := range []pgx.TxIsoLevel{pgx.RepeatableRead, pgx.Serializable} {
		for _, way := range []string{"RecordTx", "RecordManyTx"} {
			err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: level}, func(tx pgx.Tx) error {
				d := pushDelivery("not-read-committed", `{}`)
				if way == "RecordTx" {
					_, err := inbox.RecordTx(ctx, tx, d)
					return err
				}
				_, _, err := inbox.RecordManyTx(ctx, tx, []ingest.Delivery{d})
				return err
			})
			require.ErrorIs(t, err, ingest.ErrNotReadCommitted, "%s in %s", way, level)
		}
	}
	_, err := pool.Exec(ctx, `DO $$ BEGIN
		EXECUTE format('ALTER DATABASE %I SET default_transaction_isolation = %L', current_database(), 'repeatable read');
	END $$`)
	require.NoError(t, err)
	pool.Reset() // new connections take the database's default
	rec, err := inbox.Record(ctx, pushDelivery("defaults-to-repeatable-read", `{}`))
	require.NoError(t, err)
	require.Equal(t, ingest.OutcomeAccepted, rec.Outcome)
	var n int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM inbox").Scan(&n))
	require.Equal(t, 1, n)
}
