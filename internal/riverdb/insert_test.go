package riverdb_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/riverdb"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

type kindA struct{}

func (kindA) Kind() string { return "riverdb_a" }

type kindB struct{}

func (kindB) Kind() string { return "riverdb_b" }

// sent is one statement River sent through a transaction, and how.
type sent struct {
	via  string // Query, QueryRow, Exec, SendBatch, CopyFrom
	sql  string
	args []any
}

// recordingTx records what River sends through a transaction, at the seam
// where ingest's commit-carrying transaction intercepts it.
type recordingTx struct {
	pgx.Tx
	sent []sent
}

func (t *recordingTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	t.sent = append(t.sent, sent{"Query", sql, args})
	return t.Tx.Query(ctx, sql, args...)
}

func (t *recordingTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	t.sent = append(t.sent, sent{"QueryRow", sql, args})
	return t.Tx.QueryRow(ctx, sql, args...)
}

func (t *recordingTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	t.sent = append(t.sent, sent{"Exec", sql, args})
	return t.Tx.Exec(ctx, sql, args...)
}

func (t *recordingTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	t.sent = append(t.sent, sent{via: "SendBatch"})
	return t.Tx.SendBatch(ctx, b)
}

func (t *recordingTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	t.sent = append(t.sent, sent{via: "CopyFrom"})
	return t.Tx.CopyFrom(ctx, table, columns, src)
}

// InsertManyTx sends all its jobs in one statement, River's job insert,
// through Query, with one kind per job at JobInsertKindsArg; after it,
// only River's insert notification. ingest/commit_carry.go sends a batch's
// COMMIT with that statement on these grounds.
func TestInsertManyTxSendsOneJobInsert(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	require.NoError(t, err)

	notified := false // River debounces its notification: the first insert sends it
	for _, n := range []int{1, 3} {
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		rec := &recordingTx{Tx: tx}
		params := []river.InsertManyParams{{Args: kindA{}}}
		want := []string{"riverdb_a"}
		for range n - 1 {
			params = append(params, river.InsertManyParams{Args: kindB{}})
			want = append(want, "riverdb_b")
		}
		_, err = client.InsertManyTx(ctx, rec, params)
		require.NoError(t, err)
		require.NoError(t, tx.Commit(ctx))

		inserts := 0
		for i, s := range rec.sent {
			kinds, ok := riverdb.JobInsertKinds(s.sql, s.args)
			if !ok {
				continue
			}
			inserts++
			require.Equal(t, "Query", s.via, "River's job insert must go through Query, which ingest intercepts")
			require.Equal(t, want, kinds, "argument %d of River's job insert holds the kinds, one per job", riverdb.JobInsertKindsArg)
			for _, after := range rec.sent[i+1:] {
				require.True(t, riverdb.IsInsertNotify(after.sql),
					"River sent %s %.80q after its job insert; ingest refuses anything but its insert notification there", after.via, after.sql)
			}
		}
		for _, s := range rec.sent {
			notified = notified || riverdb.IsInsertNotify(s.sql)
		}
		require.Equal(t, 1, inserts, "InsertManyTx of %d jobs sends River's job insert once (statements: %v)", n, rec.sent)
	}
	require.True(t, notified, "River's insert notification is recognised by its name")
}
