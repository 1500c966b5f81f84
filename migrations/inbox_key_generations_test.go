package migrations_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/jobs"
	"github.com/hookinbox/hookinbox/migrations"
)

// Upgrading to key generations (032) keeps every key: the existing table
// becomes the first generation, so a resend of a delivery stored before is
// a duplicate of it, by id or, where the source dedupes bodies, by body,
// and new keys go there too until the next generation opens. `migrate
// --prepare` adds and validates the first generation's bound beforehand,
// and the migration uses it.
func TestKeyGenerationsKeepEveryKey(t *testing.T) {
	t.Parallel()
	for _, prepared := range []bool{false, true} {
		name := "in the migration"
		if prepared {
			name = "prepared beforehand"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			pool, apply := riverMigrated(t)
			apply(1, 31)
			rc, err := jobs.NewClient(pool, jobs.ClientConfig{InsertOnly: true})
			require.NoError(t, err)
			inbox := ingest.NewInbox(pool, rc)
			record := func(d ingest.Delivery) ingest.Recorded {
				d.Headers = http.Header{}
				rec, err := inbox.Record(ctx, d)
				require.NoError(t, err)
				return rec
			}
			body := ingest.Delivery{Source: "shopify", DeliveryID: "by-body", EventType: "orders", Payload: []byte(`{"order":1}`), DedupBody: true}
			stored := record(ingest.Delivery{Source: "github", DeliveryID: "old", EventType: "push", Payload: []byte(`{}`)})
			record(body)
			if prepared {
				_, err := pool.Exec(ctx, `
					CREATE TABLE hookinbox_migration (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
					INSERT INTO hookinbox_migration (version, name) SELECT v, 'older' FROM generate_series(1, 31) v`)
				require.NoError(t, err)
				res, err := migrations.Prepare(ctx, pool, nil)
				require.NoError(t, err)
				require.Equal(t, []int{32}, res.Versions)
				var valid bool
				require.NoError(t, pool.QueryRow(ctx, "SELECT convalidated FROM pg_constraint WHERE conname = 'inbox_key_below'").Scan(&valid))
				require.True(t, valid)
				record(ingest.Delivery{Source: "github", DeliveryID: "meanwhile", EventType: "push", Payload: []byte(`{}`)})
			}
			apply(32, 32)

			var partitioned bool
			var g0, generations, constraints int
			var hi int64
			require.NoError(t, pool.QueryRow(ctx, `SELECT
				(SELECT relkind = 'p' FROM pg_class WHERE oid = 'inbox_key'::regclass),
				(SELECT count(*) FROM inbox_key_g0),
				(SELECT count(*) FROM inbox_key_generation),
				(SELECT hi FROM inbox_key_generation),
				(SELECT count(*) FROM pg_constraint WHERE conname = 'inbox_key_below')`).Scan(&partitioned, &g0, &generations, &hi, &constraints))
			require.True(t, partitioned)
			require.Equal(t, map[bool]int{false: 2, true: 3}[prepared], g0, "every key, in the first generation")
			require.Equal(t, 1, generations)
			require.Equal(t, int64(1)<<40, hi, "a generation spans 2^40 ids")
			require.Zero(t, constraints, "the bound is the partition's now")

			rec := record(ingest.Delivery{Source: "github", DeliveryID: "old", EventType: "push", Payload: []byte(`{}`)})
			require.Equal(t, ingest.Recorded{ID: stored.ID, Outcome: ingest.OutcomeDuplicate}, rec)
			body.DeliveryID = "fresh-id"
			require.Equal(t, ingest.OutcomeDuplicate, record(body).Outcome, "same body")
			rec = record(ingest.Delivery{Source: "github", DeliveryID: "new", EventType: "push", Payload: []byte(`{}`)})
			require.Equal(t, ingest.OutcomeAccepted, rec.Outcome)
			var generation string
			require.NoError(t, pool.QueryRow(ctx, "SELECT tableoid::regclass::text FROM inbox_key WHERE inbox_id = $1", rec.ID).Scan(&generation))
			require.Equal(t, "inbox_key_g0", generation)
		})
	}
}
