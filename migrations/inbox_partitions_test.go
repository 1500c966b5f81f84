package migrations_test

import (
	"context"
	"crypto/sha256"
	"net/http"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/jobs"
)

// Upgrading to the partitioned inbox (026) keeps every delivery, its state,
// its replays and its place in dedup: a resend of a delivery stored before
// is a duplicate of it, by id or, where the source dedupes bodies, by
// body. New deliveries go to the partition after the old rows.
func TestInboxPartitionsKeepRowsAndDuplicates(t *testing.T) {
	t.Parallel()
	for _, premade := range []bool{false, true} {
		name := "in the migration"
		if premade {
			name = "with the range check made beforehand"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			pool, apply := riverMigrated(t)
			apply(1, 25)
			body := []byte(`{"body":"deduped"}`)
			sum := sha256.Sum256(body)
			bodyKey := sha256.Sum256(append([]byte("orders\x00"), sum[:]...)) // ingest's for shopify: the event type and the body's digest
			_, err := pool.Exec(ctx, `
				INSERT INTO inbox (source, delivery_id, event_type, payload, payload_sha256, body_key) VALUES
					('github',  'processed', 'push',   '{}', sha256('{}'), NULL),
					('github',  'pending',   'push',   '{}', sha256('{}'), NULL),
					('shopify', 'by-body',   'orders', $1,   $2,     $3)`, body, sum[:], bodyKey[:])
			require.NoError(t, err)
			_, err = pool.Exec(ctx, `
				INSERT INTO inbox_outcome (inbox_id, source, event_type, received_at, status, processed_at)
					SELECT id, source, event_type, received_at, 'processed', now() FROM inbox WHERE delivery_id <> 'pending';
				INSERT INTO inbox_pending (inbox_id, source, event_type, received_at)
					SELECT id, source, event_type, received_at FROM inbox WHERE delivery_id = 'pending';
				INSERT INTO replay (inbox_id, job_id) SELECT id, 7 FROM inbox WHERE delivery_id = 'processed'`)
			require.NoError(t, err)
			below := int64(4)
			if premade {
				below = 5000
				_, err = pool.Exec(ctx, `ALTER TABLE inbox ADD CONSTRAINT inbox_id_below CHECK (id < 5000) NOT VALID;
					ALTER TABLE inbox VALIDATE CONSTRAINT inbox_id_below`)
				require.NoError(t, err)
			}
			apply(26, 26)

			var statuses []string
			rows, err := pool.Query(ctx, "SELECT d.delivery_id || ' ' || d.status || ' ' || i.tableoid::regclass FROM delivery d JOIN inbox i USING (id) ORDER BY id")
			require.NoError(t, err)
			for rows.Next() {
				var s string
				require.NoError(t, rows.Scan(&s))
				statuses = append(statuses, s)
			}
			require.NoError(t, rows.Err())
			require.Equal(t, []string{"processed processed inbox_p0", "pending received inbox_p0", "by-body processed inbox_p0"}, statuses)
			var replays, keys int
			require.NoError(t, pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM replay),
				(SELECT count(*) FROM inbox_key k JOIN inbox i ON i.id = k.inbox_id
				 WHERE (k.source, k.delivery_id, k.payload_sha256, k.origin) = (i.source, i.delivery_id, i.payload_sha256, i.origin)
				   AND k.body_key IS NOT DISTINCT FROM i.body_key)`).Scan(&replays, &keys))
			require.Equal(t, 1, replays)
			require.Equal(t, 3, keys, "a key for each delivery, naming its row")

			rc, err := jobs.NewClient(pool, jobs.ClientConfig{InsertOnly: true})
			require.NoError(t, err)
			inbox := ingest.NewInbox(pool, rc)
			record := func(d ingest.Delivery) ingest.Recorded {
				d.Headers = http.Header{}
				rec, err := inbox.Record(ctx, d)
				require.NoError(t, err)
				return rec
			}
			rec := record(ingest.Delivery{Source: "github", DeliveryID: "processed", EventType: "push", Payload: []byte(`{}`)})
			require.Equal(t, ingest.OutcomeDuplicate, rec.Outcome, "same id")
			rec = record(ingest.Delivery{Source: "shopify", DeliveryID: "fresh-id", EventType: "orders", Payload: body, DedupBody: true, DedupBodyByType: true})
			require.Equal(t, ingest.OutcomeDuplicate, rec.Outcome, "same body")
			rec = record(ingest.Delivery{Source: "github", DeliveryID: "new", EventType: "push", Payload: []byte(`{}`)})
			require.Equal(t, ingest.OutcomeAccepted, rec.Outcome)
			require.GreaterOrEqual(t, rec.ID, below, "after the old rows (a duplicate's insert takes an id too)")
			var partition string
			require.NoError(t, pool.QueryRow(ctx, "SELECT tableoid::regclass::text FROM inbox WHERE id = $1", rec.ID).Scan(&partition))
			require.Equal(t, "inbox_p"+strconv.FormatInt(below, 10), partition)
		})
	}
}

// Every partition, made before migration 028 or after it, has the inbox's
// statistics targets, so autoanalyze samples 3,000 rows of it, not 30,000.
func TestPartitionsTakeTheInboxStatisticsTargets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, apply := riverMigrated(t)
	apply(1, 28)
	_, err := pool.Exec(ctx, "SELECT inbox_partition_create(5000000, 6000000)")
	require.NoError(t, err)

	rows, err := pool.Query(ctx, `
		SELECT c.relname || '.' || a.attname || ' ' || a.attstattarget
		FROM pg_inherits i
		JOIN pg_class c ON c.oid = i.inhrelid
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE i.inhparent IN ('inbox'::regclass, 'inbox_outcome'::regclass)
		  AND a.attstattarget NOT IN (0, 10)`)
	require.NoError(t, err)
	wrong, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Empty(t, wrong, "columns of a partition analyzed at the default target")

	var partitions, sampled int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(DISTINCT inhrelid) FROM pg_inherits
		WHERE inhparent IN ('inbox'::regclass, 'inbox_outcome'::regclass)`).Scan(&partitions))
	require.GreaterOrEqual(t, partitions, 6, "the first partitions, the overflows and the new ones")
	require.NoError(t, pool.QueryRow(ctx, `SELECT max(attstattarget) FROM pg_attribute
		WHERE attrelid = 'inbox_p5000000'::regclass AND attnum > 0`).Scan(&sampled))
	require.Equal(t, 10, sampled)
}

// Every partition, made before migration 030 or after it, and its TOAST
// table are vacuumed after each 100,000 inserts, not after a fifth of
// the partition is new.
func TestPartitionsAreVacuumedEveryHundredThousandInserts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, apply := riverMigrated(t)
	apply(1, 29)
	_, err := pool.Exec(ctx, "SELECT inbox_partition_create(5000000, 6000000)")
	require.NoError(t, err)
	apply(30, 30)
	_, err = pool.Exec(ctx, "SELECT inbox_partition_create(6000000, 7000000)")
	require.NoError(t, err)

	rows, err := pool.Query(ctx, `
		SELECT c.relname, coalesce(c.reloptions, '{}'), coalesce(t.reloptions, '{}')
		FROM pg_inherits i
		JOIN pg_class c ON c.oid = i.inhrelid
		JOIN pg_class t ON t.oid = c.reltoastrelid
		WHERE i.inhparent IN ('inbox'::regclass, 'inbox_outcome'::regclass)
		ORDER BY 1`)
	require.NoError(t, err)
	type settings struct {
		Table       string
		Heap, Toast []string
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[settings])
	require.NoError(t, err)
	want := []string{"autovacuum_vacuum_insert_scale_factor=0", "autovacuum_vacuum_insert_threshold=100000"}
	var names []string
	for _, s := range got {
		names = append(names, s.Table)
		require.Subset(t, s.Heap, want, s.Table)
		require.Subset(t, s.Toast, want, s.Table+"'s TOAST table")
	}
	require.Subset(t, names, []string{"inbox_overflow", "inbox_p5000000", "inbox_p6000000", "inbox_outcome_p5000000", "inbox_outcome_p6000000"})
}

// Migration 029 keeps a range of keys dropped before it at the old fixed
// pace, and gives the same to a drop by an older replica during a rolling
// deploy, whose insert names no pace.
func TestRetiredRangesBeforeThePaceKeepTheOldOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, apply := riverMigrated(t)
	apply(1, 28)
	_, err := pool.Exec(ctx, "INSERT INTO inbox_retired (lo, hi, next) VALUES (1, 1000, 1)")
	require.NoError(t, err)
	apply(29, 29)
	_, err = pool.Exec(ctx, "INSERT INTO inbox_retired (lo, hi, next) VALUES (1000, 2000, 1000)")
	require.NoError(t, err, "an older replica's drop")
	rows, err := pool.Query(ctx, "SELECT keys_per_second FROM inbox_retired ORDER BY lo")
	require.NoError(t, err)
	paces, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	require.NoError(t, err)
	require.Equal(t, []int32{2000, 2000}, paces)
}
