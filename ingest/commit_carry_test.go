package ingest

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/jobs"
)

// The tests stand in for River's job insert with a statement of the same
// name, so each outcome can be forced.
const fakeJobInsert = riverJobInsertSQL + ":many\nINSERT INTO carried (n) VALUES ($1) RETURNING n"

type carrySetup struct {
	pool *pgxpool.Pool
	conn *pgxpool.Conn
	tx   *commitCarryingTx
}

func setupCarry(t *testing.T) *carrySetup {
	t.Helper()
	ctx := context.Background()
	pool := testdb.New(t)
	_, err := pool.Exec(ctx, `CREATE TABLE carried (n int NOT NULL CHECK (n > 0))`)
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
	return &carrySetup{pool: pool, conn: conn, tx: &commitCarryingTx{Tx: tx}}
}

// insert runs the stand-in job insert through the tx as River would: query,
// read every row, close.
func (s *carrySetup) insert(ctx context.Context, n int) error {
	rows, err := s.tx.Query(ctx, fakeJobInsert, n)
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
	done, err := s.tx.commit(ctx)
	require.NoError(t, err)
	require.True(t, done)
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
	done, err := s.tx.commit(ctx)
	require.NoError(t, err)
	require.True(t, done)
	require.Equal(t, []int{1}, s.stored(t))
}

// A failing insert skips the COMMIT behind it: commit reports the failure,
// the transaction is left to roll back, and nothing of it is stored.
func TestFailedInsertCommitsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := setupCarry(t)
	require.Error(t, s.insert(ctx, -1), "the CHECK refuses it")
	done, err := s.tx.commit(ctx)
	require.Error(t, err)
	require.False(t, done)
	require.NoError(t, s.tx.Tx.Rollback(ctx))
	require.Empty(t, s.stored(t))
	require.Equal(t, byte('I'), s.conn.Conn().PgConn().TxStatus())
}

// After the carried COMMIT only River's notification and version read go
// through (outside the transaction, where they are harmless); any other
// statement is refused unsent, so a write River might add there in a later
// version fails loudly instead of escaping the transaction.
func TestOnlyHarmlessStatementsFollowTheCarriedCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := setupCarry(t)
	require.NoError(t, s.insert(ctx, 2))

	_, err := s.tx.Exec(ctx, riverNotifySQL+":exec\nSELECT pg_notify('carried', 'x')")
	require.NoError(t, err)
	var v int
	require.NoError(t, s.tx.QueryRow(ctx, riverServerVersionSQL+":one\nSELECT current_setting('server_version_num')::int").Scan(&v))
	require.Positive(t, v)

	_, err = s.tx.Exec(ctx, `INSERT INTO carried (n) VALUES (3)`)
	require.True(t, errors.Is(err, errAfterCarriedCommit), "got %v", err)
	_, err = s.tx.Query(ctx, fakeJobInsert, 4)
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
	done, err := s.tx.commit(ctx)
	require.NoError(t, err)
	require.True(t, done)
	var state string
	require.NoError(t, s.pool.QueryRow(ctx, `SELECT state FROM river_job WHERE id = $1`, res[0].Job.ID).Scan(&state))
	require.Equal(t, "available", state)
	require.Equal(t, []int{1}, s.stored(t), "the transaction's earlier work committed with the job")
}
