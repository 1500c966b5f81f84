package handlers_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/inbox"
)

// A processing batch takes the headers and payloads ingest handed on
// (ClientConfig.HandOff) instead of reading them back, each once, and
// reads from the inbox those it was not handed. The handed-on payload
// here differs from the stored one only so that the test can tell which
// the handler got; ingest hands on what it stores.
func TestProcessingTakesWhatIngestHandedOn(t *testing.T) {
	t.Parallel()
	var (
		mu  sync.Mutex
		got = map[string]string{} // delivery id → the payload and header its handler saw
	)
	h := inbox.NewHandOff()
	b := setupWith(t, setupOpts{handOff: h, jobPerBatch: true, register: func(r *handlers.Registry) {
		require.NoError(t, r.Register(handlers.Registration{
			Name: "test.handoff_probe", Source: "billing", Events: []string{"handoff.*"}, Ordering: handlers.EveryEvent, Batch: true,
			Handler: handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
				mu.Lock()
				got[e.DeliveryID] = string(e.Payload) + " " + e.Headers.Get("X-Probe")
				mu.Unlock()
				return nil
			}),
		}))
	}})
	at := time.Now()
	ds := []ingest.Delivery{
		{Source: "billing", DeliveryID: newID("handed"), EventType: "handoff.handed", Payload: standardPayload("handoff.handed", "r1", at),
			Headers: http.Header{"X-Probe": {"stored"}}},
		{Source: "billing", DeliveryID: newID("stored"), EventType: "handoff.stored", Payload: standardPayload("handoff.stored", "r2", at),
			Headers: http.Header{"X-Probe": {"stored"}}},
	}
	ids := map[string]int64{}
	require.NoError(t, pgx.BeginFunc(context.Background(), b.Pool, func(tx pgx.Tx) error {
		recs, errs, err := b.Inbox.RecordManyTx(context.Background(), tx, ds)
		require.NoError(t, err)
		for i, rec := range recs {
			require.NoError(t, errs[i])
			ids[ds[i].DeliveryID] = rec.ID
		}
		// Lower case, as no stored header is: processing canonicalizes
		// what it takes as it does what it reads.
		h.Put(recs[0].ID, http.Header{"x-probe": {"handed"}}, []byte("handed"))
		return nil
	}))
	for _, d := range ds {
		b.WaitStatus(t, ids[d.DeliveryID], "processed")
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, "handed handed", got[ds[0].DeliveryID], "taken from the hand-off")
	require.Equal(t, string(ds[1].Payload)+" stored", got[ds[1].DeliveryID], "read from the inbox")
	_, _, held := h.Take(ids[ds[0].DeliveryID])
	require.False(t, held, "taken once")
}
