package pgpipe_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/pgpipe"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

type testBundle struct {
	pool  *pgxpool.Pool
	conn  *pgxpool.Conn
	trips *testdb.RoundTrips
}

// setup is a connection of a counted pool, with a table whose deferred
// constraint fails a transaction at its COMMIT, and no round trip counted
// yet.
func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx := context.Background()
	pool, trips := testdb.NewCounted(t)
	_, err := pool.Exec(ctx, `CREATE TABLE piped (n int NOT NULL CHECK (n > 0),
		CONSTRAINT piped_n_key UNIQUE (n) DEFERRABLE INITIALLY DEFERRED)`)
	require.NoError(t, err)
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	t.Cleanup(conn.Release)
	trips.Reset()
	return &testBundle{pool: pool, conn: conn, trips: trips}
}

func (b *testBundle) stored(t *testing.T) []int {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), `SELECT n FROM piped ORDER BY n`)
	require.NoError(t, err)
	ns, err := pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	return ns
}

func (b *testBundle) status() byte { return b.conn.Conn().PgConn().TxStatus() }

// begin is a Pipe on the bundle's connection whose next round trip
// begins a transaction.
func (b *testBundle) begin() *pgpipe.Pipe {
	p := pgpipe.New(b.conn)
	p.Queue("BEGIN")
	return p
}

func batchOf(sqls ...string) *pgx.Batch {
	b := &pgx.Batch{}
	for _, sql := range sqls {
		b.Queue(sql)
	}
	return b
}

// A transaction of two round trips: BEGIN and the queued writes travel
// with the first, in order, ahead of its own statement, which sees them;
// COMMIT travels behind the second's.
func TestQueuedStatementsTravelWithTheNextRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	p := b.begin()
	p.Queue("INSERT INTO piped VALUES ($1)", 1)
	p.Carry(&pgx.QueuedQuery{SQL: "INSERT INTO piped SELECT max(n) + 1 FROM piped"})
	require.Equal(t, 3, p.Len())
	require.Empty(t, b.trips.Sent(), "nothing is sent at Queue")

	first := &pgx.Batch{}
	var seen []int
	first.Queue("SELECT n FROM piped ORDER BY n").Query(func(rows pgx.Rows) error {
		var err error
		seen, err = pgx.CollectRows(rows, pgx.RowTo[int])
		return err
	})
	res, err := p.Send(ctx, first)
	require.NoError(t, err)
	require.NoError(t, res.Close())
	require.Equal(t, []int{1, 2}, seen, "the queued writes ran first, in order")
	require.Zero(t, p.Len())
	require.Equal(t, byte('T'), b.status())

	res, err = p.SendCommit(ctx, batchOf("INSERT INTO piped VALUES (3)"))
	require.NoError(t, err)
	require.NoError(t, res.Close())
	require.Equal(t, byte('I'), b.status())
	require.Len(t, b.trips.Sent(), 2, "round trips:\n%s", b.trips)
	require.Equal(t, []int{1, 2, 3}, b.stored(t))
}

// A queued statement that fails is the round trip's error, as a
// *CarriedError, and the round trip's own statements do not run; the
// transaction is left open for Release to roll back.
func TestACarriedFailureSkipsTheRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	p := b.begin()
	p.Queue("INSERT INTO piped VALUES (-1)") // the CHECK refuses it
	_, err := p.SendCommit(ctx, batchOf("INSERT INTO piped VALUES (1)"))
	var carried *pgpipe.CarriedError
	require.True(t, errors.As(err, &carried), "got %v", err)
	require.ErrorContains(t, err, "piped_n_check")
	require.Equal(t, byte('E'), b.status(), "open, aborted: its COMMIT was skipped")

	conns := b.pool.Stat().NewConnsCount()
	pgpipe.Release(ctx, b.conn)
	b.conn = nil
	require.Empty(t, b.stored(t))
	require.Equal(t, conns, b.pool.Stat().NewConnsCount(), "rolled back and pooled, not closed")
}

// A COMMIT that fails (a deferred constraint) is the error of the round
// trip's Close, and it ends the transaction: nothing to roll back.
func TestSendCommitReportsACommitThatFailed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	res, err := b.begin().SendCommit(ctx, batchOf("INSERT INTO piped VALUES (1), (1)"))
	require.NoError(t, err)
	require.ErrorContains(t, res.Close(), "piped_n_key")
	require.Equal(t, byte('I'), b.status())
	require.Empty(t, b.stored(t))
}

// A COMMIT in a transaction an earlier round trip aborted is answered
// with a rollback, which SendCommit's Close reports as pgx does.
func TestSendCommitInAnAbortedTransactionIsARollback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	p := b.begin()
	p.Queue("INSERT INTO piped VALUES (1)")
	res, err := p.Send(ctx, batchOf("SELECT 1 / 0"))
	require.NoError(t, err)
	require.Error(t, res.Close())
	res, err = p.SendCommit(ctx, &pgx.Batch{})
	require.NoError(t, err)
	require.ErrorIs(t, res.Close(), pgx.ErrTxCommitRollback)
	require.Equal(t, byte('I'), b.status())
	require.Empty(t, b.stored(t))
}

// Flush sends what is queued in a round trip of its own, and nothing when
// nothing is; Drop forgets what was queued after a point.
func TestFlushAndDrop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	p := pgpipe.New(b.conn)
	require.NoError(t, p.Flush(ctx))
	require.Empty(t, b.trips.Sent())

	p.Queue("INSERT INTO piped VALUES (1)")
	p.Queue("INSERT INTO piped VALUES (2)")
	p.Queue("INSERT INTO piped VALUES (3)")
	p.Drop(2)
	require.NoError(t, p.Flush(ctx))
	require.Equal(t, [][]string{{"INSERT INTO piped VALUES (1)", "INSERT INTO piped VALUES (2)"}}, b.trips.Sent())
	require.Equal(t, []int{1, 2}, b.stored(t))
}

// A Tx asks Before about each statement run on it, with its text, and
// does not send one Before refuses.
func TestTxAsksBeforeEachStatement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	inner, err := b.conn.Begin(ctx)
	require.NoError(t, err)
	defer inner.Rollback(ctx) //nolint:errcheck // the test's end
	refused := errors.New("refused")
	var asked []string
	tx := &pgpipe.Tx{Tx: inner, Before: func(_ context.Context, sql string) error {
		asked = append(asked, sql)
		if sql == "SELECT 2" {
			return refused
		}
		return nil
	}}
	b.trips.Reset()

	_, err = tx.Exec(ctx, "INSERT INTO piped VALUES (1)")
	require.NoError(t, err)
	var n int
	require.NoError(t, tx.QueryRow(ctx, "SELECT 1").Scan(&n))
	require.ErrorIs(t, tx.QueryRow(ctx, "SELECT 2").Scan(&n), refused)
	_, err = tx.Query(ctx, "SELECT 2")
	require.ErrorIs(t, err, refused)
	require.ErrorIs(t, tx.SendBatch(ctx, batchOf("SELECT 1", "SELECT 2")).Close(), refused)
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"piped"}, []string{"n"}, pgx.CopyFromRows([][]any{{2}}))
	require.NoError(t, err)
	nested, err := tx.Begin(ctx)
	require.NoError(t, err)
	require.NoError(t, nested.Rollback(ctx))

	require.Equal(t, []string{"INSERT INTO piped VALUES (1)", "SELECT 1", "SELECT 2", "SELECT 2", "SELECT 1", "SELECT 2",
		`COPY "piped"`, "SAVEPOINT"}, asked)
	require.Len(t, b.trips.Sent(), 5, "the refused statements were not sent:\n%s", b.trips)
	require.Equal(t, []string{"savepoint sp_1"}, b.trips.Sent()[3], "Begin is a savepoint")
}
