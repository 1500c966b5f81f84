package destination

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
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

	d := &dest{Destination: config.Destination{Name: "orders"}}
	key := "issue-1"
	ended := []orderedEnd{{send: &loadedSend{Source: "github", ResourceKey: &key}, succeeded: true}}
	const calls = 8
	for range calls {
		require.NoError(t, pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if err := finishOrdered(ctx, tx, d, ended); err != nil {
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

// A claim lines up ordered sends with a plan of hashes, never nested
// loops: planned from statistics taken before a backlog built up (here: 20
// sends, all sent), the planner expects one waiting send and, with nested
// loops, compares each of a thousand with every other. Hashed, it reads no
// more of the destination's sends than it lines up, however many wait
// behind them, here or at another destination. The setting is the default
// again once the line-up is done.
func TestLineUpPlansNoNestedLoop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	insertSends := func(destination string, n, from int, state string, inLine bool) {
		_, err := pool.Exec(ctx, `INSERT INTO destination_send (destination, source, delivery_id, inbox_id, event_type, key,
				ordered, skip_stale, resource_key, event_at, event_received_at, at_is_receipt, state, in_line)
			SELECT $5, 'github', 'd' || g, g, 'issues', 'k' || g, true, false, 'r' || (g % 2000), now(), now(), false, $3, $4
			FROM generate_series($1::int, $1::int + $2::int - 1) g`, from, n, state, inLine, destination)
		require.NoError(t, err)
	}
	insertSends("orders", 20, 0, "succeeded", true)
	_, err := pool.Exec(ctx, "ANALYZE destination_send; ANALYZE destination_resource")
	require.NoError(t, err)
	insertSends("orders", 5000, 100, "waiting", false)
	insertSends("other", 3000, 10000, "waiting", false)

	b := &pgx.Batch{}
	var more bool
	queueLineUp(b, &dest{Destination: config.Destination{Name: "orders"}}, &more)
	var plan []string
	for _, q := range b.QueuedQueries {
		if q.SQL == chainLineUpSQL {
			q.SQL = "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + q.SQL
			q.Query(func(rows pgx.Rows) error {
				plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
				return err
			})
		}
	}
	var nestLoop string
	b.Queue("SELECT current_setting('enable_nestloop')").QueryRow(func(row pgx.Row) error { return row.Scan(&nestLoop) })
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		return tx.SendBatch(ctx, b).Close()
	}))
	require.NotEmpty(t, plan)
	text := strings.Join(plan, "\n")
	require.NotContains(t, text, "Nested Loop", text)
	read := regexp.MustCompile(`Scan[^\n]* on destination_send s \(actual rows=(\d+)`).FindStringSubmatch(text)
	require.NotNil(t, read, text)
	require.Equal(t, strconv.Itoa(lineUpLimit), read[1], "the sends read to be updated are the ones lined up\n"+text)
	require.Equal(t, "on", nestLoop, "the claim's later statements keep the default")
}

// A resource's next waiting send is read at the head of its line, never by
// sorting the destination's waiting sends: the statement that ends turns
// runs with sorts off (a trigger on the turn rows it updates reads the
// setting), and the transaction's later statements with the default.
func TestTurnsEndWithoutASort(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	_, err := pool.Exec(ctx, `
		CREATE TABLE seen_enable_sort (setting text NOT NULL);
		CREATE FUNCTION record_enable_sort() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			INSERT INTO seen_enable_sort VALUES (current_setting('enable_sort'));
			RETURN NEW;
		END $$;
		CREATE TRIGGER record_enable_sort BEFORE UPDATE ON destination_resource
			FOR EACH ROW EXECUTE FUNCTION record_enable_sort();
		INSERT INTO destination_resource (destination, source, resource_key, busy) VALUES ('orders', 'github', 'issue-1', true)`)
	require.NoError(t, err)

	key := "issue-1"
	ended := []orderedEnd{{send: &loadedSend{Source: "github", ResourceKey: &key}, succeeded: true}}
	var after string
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := finishOrdered(ctx, tx, &dest{Destination: config.Destination{Name: "orders"}}, ended); err != nil {
			return err
		}
		return tx.QueryRow(ctx, "SELECT current_setting('enable_sort')").Scan(&after)
	}))
	rows, err := pool.Query(ctx, "SELECT setting FROM seen_enable_sort")
	require.NoError(t, err)
	seen, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Equal(t, []string{"off"}, seen, "the turn's row was updated once, with sorts off")
	require.Equal(t, "on", after, "the statements after the turns' keep the default")
}

// finishOrdered ends ended's turns in tx, as a sender's cycle does.
func finishOrdered(ctx context.Context, tx pgx.Tx, d *dest, ended []orderedEnd) error {
	var handed bool
	b := &pgx.Batch{}
	queueFinishOrdered(b, d, ended, &handed)
	return tx.SendBatch(ctx, b).Close()
}
