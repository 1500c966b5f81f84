package inbox_test

import (
	"context"
	"crypto/sha256"
	"net/http"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

func row(deliveryID, payload string) inbox.Row {
	sum := sha256.Sum256([]byte(payload))
	return inbox.Row{Source: "github", DeliveryID: deliveryID, EventType: "push",
		Headers: http.Header{}, Payload: []byte(payload), PayloadSHA256: sum[:], Origin: "webhook"}
}

// A record's statements travel in the caller's batch, behind the caller's
// own, and are read in their order: the first send stores the new keys,
// the second finds them stored.
func TestRecordManyTravelsInTheCallersBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	rows := []inbox.Row{row("d-1", `{"n":1}`), row("d-2", `{"n":2}`), row("d-1", `{"n":1}`)}

	send := func() (map[inbox.Key]int64, map[inbox.Key]inbox.Stored) {
		t.Helper()
		tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
		require.NoError(t, err)
		defer tx.Rollback(ctx) //nolint:errcheck // after Commit, a no-op
		b := &pgx.Batch{}
		b.Queue("SELECT 1") // the caller's own statement, ahead
		require.NoError(t, inbox.QueueRecordMany(b, rows))
		res := tx.SendBatch(ctx, b)
		defer res.Close()
		_, err = res.Exec()
		require.NoError(t, err)
		inserted, stored, err := inbox.ReadRecordMany(res)
		require.NoError(t, err)
		require.NoError(t, res.Close())
		require.NoError(t, tx.Commit(ctx))
		return inserted, stored
	}
	inserted, stored := send()
	require.Len(t, inserted, 2, "the second copy of d-1 is not stored again")
	require.Empty(t, stored)

	again, stored := send()
	require.Empty(t, again)
	for k, id := range inserted {
		require.Equal(t, id, stored[k].ID)
		require.Equal(t, k.DeliveryID, stored[k].DeliveryID)
	}
}

// A record in a transaction that is not READ COMMITTED is refused by the
// fence's read, before anything it stored is read as stored.
func TestRecordRefusesAnotherIsolation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck // the test's end
	b := &pgx.Batch{}
	inbox.QueueRecord(b, row("d-1", `{}`))
	res := tx.SendBatch(ctx, b)
	defer res.Close()
	_, _, err = inbox.ReadRecord(res)
	require.ErrorIs(t, err, inbox.ErrNotReadCommitted)
	require.NoError(t, res.Close())
}

// The batch's read of stored keys probes the unique index once per key,
// even with a plan made on a small key table (2,000 rows) and cached as a
// generic plan: flattened into a join, it was planned as a hash join over
// a scan of the whole table, and that plan stayed as the table grew.
func TestInboxFindManyProbesTheUniqueIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	findSQL, err := os.ReadFile("sql/inbox_find_many.sql")
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO inbox_key (source, delivery_id, inbox_id, payload_sha256, origin)
		SELECT 'github', 'd-' || g, g, '\x00', 'webhook' FROM generate_series(1, 2000) g`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, "ANALYZE inbox_key")
	require.NoError(t, err)

	plan := testdb.GenericPlan(t, pool, string(findSQL), pgx.NamedArgs{
		"sources": []string{"github", "github", "github"}, "delivery_ids": []string{"d-1", "d-2", "new"},
	})
	require.Regexp(t, `Index Scan (using|on) inbox_key_g0_pkey`, plan)
	require.NotContains(t, plan, "Seq Scan", plan)
}
