package handlers_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

// ledgerRows writes deferred rows into row_effect, a statement per call,
// and counts the rows of each call.
type ledgerRows struct {
	mu    sync.Mutex
	calls []int
}

func (l *ledgerRows) QueueRows(batch *pgx.Batch, rows []any) {
	l.mu.Lock()
	l.calls = append(l.calls, len(rows))
	l.mu.Unlock()
	ids := make([]*string, len(rows))
	for i, r := range rows {
		if id, ok := r.(string); ok {
			ids[i] = &id
		}
	}
	batch.Queue("INSERT INTO row_effect (delivery_id) SELECT * FROM unnest($1::text[])", ids)
}

func (l *ledgerRows) rowsPerCall() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int(nil), l.calls...)
}

var errProbe = errors.New("the probe fails on purpose")

// registerRowProbe adds a batchable handler for billing's "ok", "fail" and
// "bad_row" events: each defers its delivery id as a row, then "fail" fails
// its handler and "bad_row" defers a second row that breaks a NOT NULL
// constraint.
func registerRowProbe(t *testing.T, w *ledgerRows) func(r *handlers.Registry) {
	return func(r *handlers.Registry) {
		require.NoError(t, r.Register(handlers.Registration{
			Name: "test.row_probe", Source: "billing", Events: []string{"ok", "fail", "bad_row"}, Ordering: handlers.EveryEvent, Batch: true,
			Handler: handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
				e.DeferRow(w, e.DeliveryID)
				switch e.EventType {
				case "fail":
					return errProbe
				case "bad_row":
					e.DeferRow(w, nil)
				}
				return nil
			}),
		}))
	}
}

// A batch's deferred rows are written in one statement for all of its
// deliveries, once each, after the last delivery's work, and commit with
// the batch; a delivery whose handler fails leaves no row. A row the
// database refuses fails the batch (its deliveries are then processed one
// by one), and a delivery processed alone writes its rows alone.
func TestDeferredRowsAreWrittenOncePerBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	_, err := pool.Exec(ctx, "CREATE TABLE row_effect (delivery_id text NOT NULL)")
	require.NoError(t, err)
	w := &ledgerRows{}
	reg := handlers.NewRegistry(handlers.Config{Sources: []handlers.Source{{Name: "billing", Provider: "standard"}}})
	registerRowProbe(t, w)(reg)
	deliveries := func(events ...string) []handlers.Delivery {
		ds := make([]handlers.Delivery, len(events))
		for i, ev := range events {
			ds[i] = handlers.Delivery{Source: "billing", Provider: "standard", EventType: ev, DeliveryID: newID(ev), ReceivedAt: time.Now(), Payload: []byte(`{}`)}
		}
		return ds
	}
	stored := func(ds []handlers.Delivery) []int {
		n := make([]int, len(ds))
		for i, d := range ds {
			require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM row_effect WHERE delivery_id = $1", d.DeliveryID).Scan(&n[i]))
		}
		return n
	}

	ds := deliveries("ok", "ok", "fail", "ok")
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		_, errs, err := reg.ProcessBatch(ctx, tx, nil, ds)
		require.NoError(t, err)
		require.ErrorIs(t, errs[2], errProbe)
		return nil
	}))
	require.Equal(t, []int{1, 1, 0, 1}, stored(ds))
	require.Equal(t, []int{3}, w.rowsPerCall(), "one statement for the batch's three processed deliveries")

	ds = deliveries("ok", "bad_row")
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	_, _, err = reg.ProcessBatch(ctx, tx, nil, ds)
	require.ErrorContains(t, err, `null value in column "delivery_id"`)
	require.NoError(t, tx.Rollback(ctx))
	require.Equal(t, []int{0, 0}, stored(ds), "the batch failed: nothing of it is written")
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		_, err := reg.Process(ctx, tx, nil, ds[0])
		return err
	}))
	require.Equal(t, []int{1, 0}, stored(ds))
	require.Equal(t, []int{3, 3, 1}, w.rowsPerCall(), "alone, a delivery writes its own rows")
}

// sliceRows is a RowWriter that cannot be compared.
type sliceRows []int

func (sliceRows) QueueRows(*pgx.Batch, []any) {}

// A RowWriter that cannot be compared fails its delivery with an error
// that says so, where the handler runs, and not the batch with a runtime
// panic: its neighbours are processed.
func TestDeferRowRefusesAWriterThatCannotBeCompared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	reg := handlers.NewRegistry(handlers.Config{Sources: []handlers.Source{{Name: "billing", Provider: "standard"}}})
	require.NoError(t, reg.Register(handlers.Registration{
		Name: "test.slice_rows", Source: "billing", Events: []string{"ok", "bad"}, Ordering: handlers.EveryEvent, Batch: true,
		Handler: handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
			if e.EventType == "bad" {
				e.DeferRow(sliceRows{1}, 1)
				e.DeferRow(sliceRows{2}, 2)
			}
			return nil
		}),
	}))
	ds := []handlers.Delivery{
		{Source: "billing", Provider: "standard", EventType: "ok", DeliveryID: newID("ok"), ReceivedAt: time.Now(), Payload: []byte(`{}`)},
		{Source: "billing", Provider: "standard", EventType: "bad", DeliveryID: newID("bad"), ReceivedAt: time.Now(), Payload: []byte(`{}`)},
	}
	require.NoError(t, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		results, errs, err := reg.ProcessBatch(ctx, tx, nil, ds)
		require.NoError(t, err)
		require.NoError(t, errs[0])
		require.Equal(t, handlers.OutcomeProcessed, results[0].Outcome)
		require.ErrorContains(t, errs[1], "DeferRow needs a comparable RowWriter")
		return nil
	}))
}
