package ingest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
)

// A stored key can vanish between a batch's insert and its read (deleted
// by retention in between). The batch has then inserted the rows of the
// deliveries it accepted, and not yet their jobs: it must fail, so that
// its caller rolls back, never hand back a result that its caller
// commits with rows and no jobs. A trigger deletes the key inside the
// insert, where a concurrent delete would land between the two
// statements.
func TestRecordManyTxWhoseKeyVanishesLeavesNoRowWithoutItsJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, inbox := newInbox(t)
	_, err := inbox.Record(ctx, pushDelivery("gone", `{"n":0}`))
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `CREATE FUNCTION forget_gone() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN DELETE FROM inbox_key WHERE delivery_id = 'gone'; RETURN NULL; END $$;
		CREATE TRIGGER forget_gone AFTER INSERT ON inbox FOR EACH ROW EXECUTE FUNCTION forget_gone();`)
	require.NoError(t, err)

	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	_, _, err = inbox.RecordManyTx(ctx, tx, []ingest.Delivery{pushDelivery("fresh", `{"n":1}`), pushDelivery("gone", `{"n":0}`)})
	if err != nil {
		require.NoError(t, tx.Rollback(ctx)) // what every caller does with an error
	} else {
		require.NoError(t, tx.Commit(ctx))
	}
	var jobless int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM inbox i
		WHERE i.delivery_id = 'fresh' AND NOT EXISTS (SELECT FROM delivery_job_ids(i.id))`).Scan(&jobless))
	require.Zero(t, jobless, "an inbox row committed without its job")
}
