package migrations_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// Sagas failed before 006 get the step they failed at: the refund if its
// step was recorded (the saga moved to refunding with it), else the
// fulfillment. Other sagas get none.
func TestSagaFailedStepBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, apply := riverMigrated(t)
	apply(1, 5)
	_, err := pool.Exec(ctx, `
		INSERT INTO payment_saga (payment_intent, source, delivery_id, amount, currency, state, fulfill_key, refund_key) VALUES
			('pi_f', 'stripe', 'e1', 100, 'eur', 'failed', 'k_f1', 'k_r1'),
			('pi_r', 'stripe', 'e2', 100, 'eur', 'failed', 'k_f2', 'k_r2'),
			('pi_ok', 'stripe', 'e3', 100, 'eur', 'fulfilled', 'k_f3', 'k_r3');
		INSERT INTO handler_step (key, source, delivery_id, handler, step) VALUES
			('k_f1', 'stripe', 'e1', 'stripe.payment_saga', 'fulfill'),
			('k_f2', 'stripe', 'e2', 'stripe.payment_saga', 'fulfill'),
			('k_r2', 'stripe', 'e2', 'stripe.payment_saga', 'refund')`)
	require.NoError(t, err)
	apply(6, 6)

	rows, err := pool.Query(ctx, "SELECT payment_intent, coalesce(failed_step, '') FROM payment_saga ORDER BY 1")
	require.NoError(t, err)
	got := map[string]string{}
	for rows.Next() {
		var pi, step string
		require.NoError(t, rows.Scan(&pi, &step))
		got[pi] = step
	}
	require.NoError(t, rows.Err())
	require.Equal(t, map[string]string{"pi_f": "fulfill", "pi_r": "refund", "pi_ok": ""}, got)

	_, err = pool.Exec(ctx, "UPDATE payment_saga SET state = 'failed' WHERE payment_intent = 'pi_ok'")
	require.ErrorContains(t, err, "payment_saga_failed_step", "failed without a step is refused")
}
