package destination

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

// The statements that end ordered sends' turns are planned for their
// arguments on every call, never from a generic plan the server caches
// (from a statement's sixth call): one cached in a destination's first
// seconds, on nearly empty tables, scans them whole for every send as they
// grow. The transaction's other statements keep the default.
func TestTurnsEndWithPlansMadeForTheirArguments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()

	d := &dest{Destination: Destination{Name: "orders"}}
	key := "issue-1"
	ended := []orderedEnd{{send: &loadedSend{Source: "github", ResourceKey: &key}, succeeded: true}}
	const calls = 8
	for range calls {
		require.NoError(t, pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := finishOrderedTx(ctx, tx, d, ended); err != nil {
				return err
			}
			var mode string
			if err := tx.QueryRow(ctx, "SELECT current_setting('plan_cache_mode')").Scan(&mode); err != nil {
				return err
			}
			require.Equal(t, "auto", mode, "the statements after the turns' keep the default")
			return nil
		}))
	}
	for _, text := range []string{"Ends the turns of finished ordered sends", "The turn rows of several"} {
		var generic, custom int64
		require.NoError(t, conn.QueryRow(ctx, `SELECT coalesce(sum(generic_plans), 0), coalesce(sum(custom_plans), 0)
			FROM pg_prepared_statements WHERE strpos(statement, $1) > 0`, text).Scan(&generic, &custom))
		require.Zero(t, generic, text)
		require.EqualValues(t, calls, custom, text)
	}
}
