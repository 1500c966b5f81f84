package ingest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/riverdb"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/jobs"
)

// The tests stand in for River's job insert with a statement of the same
// name, so each outcome can be forced.
// Like River's, its fourth argument holds one job kind per row inserted.
const fakeJobInsert = riverdb.JobInsertStatement + ":many\n" +
	"INSERT INTO carried (n) SELECT $1::int + 0 * $2::int + 0 * $3::int + 0 * cardinality($4::text[]) RETURNING n"

type carrySetup struct {
	pool *pgxpool.Pool
	conn *pgxpool.Conn
	tx   *commitCarryingTx
}

func setupCarry(t *testing.T) *carrySetup {
	t.Helper()
	ctx := context.Background()
	pool := testdb.New(t)
	// The deferred constraint fails a transaction at its COMMIT.
	_, err := pool.Exec(ctx, `CREATE TABLE carried (n int NOT NULL CHECK (n > 0),
		CONSTRAINT carried_n_key UNIQUE (n) DEFERRABLE INITIALLY DEFERRED)`)
	require.NoError(t, err)
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	t.Cleanup(conn.Release)
	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	b.Queue(`INSERT INTO carried (n) VALUES (1)`)
	res := conn.SendBatch(ctx, b)
	tx := res.Tx()
	require.NoError(t, res.Close())
	ct := newCommitCarryingTx(tx)
	ct.jobs = 1
	return &carrySetup{pool: pool, conn: conn, tx: ct}
}

// insert runs the stand-in job insert through the tx as River would: query,
// read every row, close.
func (s *carrySetup) insert(ctx context.Context, n int) error {
	return s.insertKinds(ctx, n, []string{"k"})
}

func (s *carrySetup) insertKinds(ctx context.Context, n int, kinds []string) error {
	rows, err := s.tx.Query(ctx, fakeJobInsert, n, 0, 0, kinds)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	rows.Close()
	return rows.Err()
}

func (s *carrySetup) stored(t *testing.T) []int {
	t.Helper()
	rows, err := s.pool.Query(context.Background(), `SELECT n FROM carried ORDER BY n`)
	require.NoError(t, err)
	ns, err := pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	return ns
}

// River's insert carries the COMMIT: the transaction's earlier work and the
// insert are committed when the insert's rows are read, with no round trip
// of its own, and the connection is idle.
func TestCommitTravelsWithRiversInsert(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := setupCarry(t)
	require.NoError(t, s.insert(ctx, 2))
	require.True(t, s.tx.carried())
	require.Equal(t, []int{1, 2}, s.stored(t), "committed before commit() is called")
	require.Equal(t, byte('I'), s.conn.Conn().PgConn().TxStatus())
	require.NoError(t, s.tx.commit(ctx))
}

// Other statements go out alone and carry nothing.
func TestOtherStatementsCarryNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := setupCarry(t)
	var n int
	require.NoError(t, s.tx.QueryRow(ctx, `SELECT count(*) FROM carried`).Scan(&n))
	rows, err := s.tx.Query(ctx, `SELECT n FROM carried`)
	require.NoError(t, err)
	rows.Close()
	require.False(t, s.tx.carried())
	require.Empty(t, s.stored(t), "nothing committed yet")
	require.NoError(t, s.tx.commit(ctx))
	require.Equal(t, []int{1}, s.stored(t))
}

// A failing insert skips the COMMIT behind it: commit reports the failure,
// the transaction is left to roll back (pgpipe.Release does), and nothing
// of it is stored.
func TestFailedInsertCommitsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := setupCarry(t)
	require.Error(t, s.insert(ctx, -1), "the CHECK refuses it")
	require.Error(t, s.tx.commit(ctx))
	require.Equal(t, byte('E'), s.conn.Conn().PgConn().TxStatus(), "open, aborted")
	require.NoError(t, s.tx.Tx.Rollback(ctx))
	require.Empty(t, s.stored(t))
	require.Equal(t, byte('I'), s.conn.Conn().PgConn().TxStatus())
}

// After the carried COMMIT only River's notification goes through
// (outside the transaction, where it is harmless); any other
// statement is refused unsent, so a write River might add there in a later
// version fails loudly instead of escaping the transaction.
func TestOnlyHarmlessStatementsFollowTheCarriedCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := setupCarry(t)
	require.NoError(t, s.insert(ctx, 2))

	_, err := s.tx.Exec(ctx, riverdb.InsertNotifyStatement+":exec\nSELECT pg_notify('carried', 'x')")
	require.NoError(t, err)
	var v int

	_, err = s.tx.Exec(ctx, `INSERT INTO carried (n) VALUES (3)`)
	require.True(t, errors.Is(err, errAfterCarriedCommit), "got %v", err)
	_, err = s.tx.Query(ctx, fakeJobInsert, 4, 0, 0, []string{"k"})
	require.True(t, errors.Is(err, errAfterCarriedCommit), "a second insert is refused too: got %v", err)
	err = s.tx.QueryRow(ctx, `SELECT 1`).Scan(&v)
	require.True(t, errors.Is(err, errAfterCarriedCommit), "got %v", err)
	require.Equal(t, []int{1, 2}, s.stored(t))
}

// River's own job insert is the statement that carries the COMMIT: its
// text starts with the name matched here. If a River upgrade renames it,
// this fails (batches would still commit, one round trip slower).
func TestRiversJobInsertCarriesTheCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := setupCarry(t)
	client, err := jobs.NewClient(s.pool, jobs.ClientConfig{InsertOnly: true})
	require.NoError(t, err)
	res, err := client.InsertManyTx(ctx, s.tx, []river.InsertManyParams{{Args: jobs.ProcessDeliveryArgs{InboxID: 1}}})
	require.NoError(t, err)
	require.True(t, s.tx.carried())
	require.NoError(t, s.tx.commit(ctx))
	var state string
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT state FROM river_job WHERE id = $1`, res[0].Job.ID).Scan(&state))
	require.Equal(t, "available", state)
	require.Equal(t, []int{1}, s.stored(t), "the transaction's earlier work committed with the job")
}

// A COMMIT that fails after the insert succeeded (here a deferred unique
// constraint) stores nothing, and commit reports it.
func TestCarriedCommitThatFailsStoresNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := setupCarry(t)
	require.NoError(t, s.insert(ctx, 1), "the duplicate is only checked at COMMIT")
	require.Error(t, s.tx.commit(ctx))
	require.False(t, s.tx.committed())
	require.Equal(t, byte('I'), s.conn.Conn().PgConn().TxStatus(), "the failed COMMIT ended it: nothing to roll back")
	require.Empty(t, s.stored(t))
}

// An insert of only some of the batch's jobs carries nothing: were River
// to split them over two statements, the first COMMIT would store the rows
// with half their jobs.
func TestPartialJobInsertCarriesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := setupCarry(t)
	s.tx.jobs = 2
	require.NoError(t, s.insertKinds(ctx, 2, []string{"k"}))
	require.False(t, s.tx.carried())
	require.NoError(t, s.insertKinds(ctx, 3, []string{"k", "k"}))
	require.True(t, s.tx.carried())
	require.NoError(t, s.tx.commit(ctx))
	require.Equal(t, []int{1, 2, 3}, s.stored(t))
}

// A batch that committed before River failed is not recorded again one by
// one (which would answer its deliveries "duplicate"): it is a 503, and
// the provider's retry finds them stored.
func TestStoredThenFailedIsNotRecordedAgain(t *testing.T) {
	t.Parallel()
	pgErr := &pgconn.PgError{Code: "42501", Message: "permission denied for function pg_notify"}
	require.True(t, refusedByDatabase(pgErr))
	require.False(t, refusedByDatabase(&storedThenFailedError{pgErr}))
}

// A batch is two round trips whatever it holds: its BEGIN travels with
// the insert and the lookup, its COMMIT behind River's job insert, and the
// connection goes back to the pool with no round trip of its own. River's
// insert notification, after the COMMIT and at most once a fetch cooldown,
// is not the batch's.
func TestABatchIsTwoRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, trips := testdb.NewCounted(t)
	client, err := jobs.NewClient(pool, jobs.ClientConfig{InsertOnly: true})
	require.NoError(t, err)
	in := NewInbox(pool, client)
	delivery := func(id string) Delivery {
		return Delivery{Source: "github", DeliveryID: id, EventType: "push", Payload: []byte(`{"id":"` + id + `"}`)}
	}
	for _, perBatch := range []bool{false, true} {
		in.JobPerBatch = perBatch
		// The first batch of a connection prepares its statements, and
		// River reads the server's version once.
		_, _, err := in.recordMany(ctx, []Delivery{delivery(fmt.Sprint("warm-", perBatch))})
		require.NoError(t, err)
		for _, n := range []int{1, 5} {
			ds := make([]Delivery, n)
			for i := range ds {
				ds[i] = delivery(fmt.Sprintf("d-%t-%d-%d", perBatch, n, i))
			}
			trips.Reset()
			recs, _, err := in.recordMany(ctx, ds)
			require.NoError(t, err)
			require.Equal(t, OutcomeAccepted, recs[n-1].Outcome)
			var batch [][]string
			for _, trip := range trips.Sent() {
				if len(trip) == 1 && riverdb.IsInsertNotify(trip[0]) {
					continue
				}
				batch = append(batch, trip)
			}
			require.Equal(t, 2, len(batch), "job per batch %t, %d deliveries:\n%s", perBatch, n, trips)
			require.Equal(t, "COMMIT", batch[1][len(batch[1])-1], "the second round trip commits:\n%s", trips)
		}
	}
	require.Zero(t, pool.Stat().AcquiredConns())
}
