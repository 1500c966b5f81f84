package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
)

// conflict records, as ingest does on a 409, a delivery of id with body
// that conflicts with the stored one, and returns the record's id.
func (b *testBundle) conflict(t *testing.T, source, id, body string) int64 {
	t.Helper()
	ctx := context.Background()
	d := ingest.Delivery{Source: source, DeliveryID: id, EventType: "charge.succeeded",
		Headers: map[string][]string{"Stripe-Signature": {"t=1,v1=abc"}}, Payload: []byte(body)}
	rec, err := b.inbox.Record(ctx, d)
	require.ErrorIs(t, err, ingest.ErrDeliveryConflict)
	require.NoError(t, b.inbox.RecordConflict(ctx, d, rec.ID))
	var n int64
	require.NoError(t, b.pool.QueryRow(ctx, "SELECT max(id) FROM delivery_conflict").Scan(&n))
	return n
}

func TestConsoleConflicts(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true})
	stored := b.deliver(t, "stripe", "evt_conf_1", "charge.succeeded", `{"id":"evt_conf_1","amount":100,"currency":"eur"}`)
	changed := b.conflict(t, "stripe", "evt_conf_1", `{"id":"evt_conf_1","amount":200,"currency":"eur"}`)
	b.deliver(t, "stripe", "evt_conf_2", "charge.succeeded", `{"a":1}`)
	spacing := b.conflict(t, "stripe", "evt_conf_2", `{ "a": 1 }`)

	r := b.do(t, http.MethodGet, "/console/conflicts", "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Contains(t, string(r.body), "evt_conf_1")
	require.Contains(t, string(r.body), fmt.Sprintf(`href="/console/deliveries/%d"`, stored))

	r = b.do(t, http.MethodGet, "/console/conflicts/"+strconv.FormatInt(changed, 10), "", nil)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	page := string(r.body)
	require.Regexp(t, `<td class="del">  &#34;amount&#34;: 100,</td>\s*<td class="ln">3</td><td class="add">  &#34;amount&#34;: 200,</td>`, page)
	require.Contains(t, page, "Stripe-Signature")
	require.NotContains(t, page, "differ in their bytes only")

	r = b.do(t, http.MethodGet, "/console/conflicts/"+strconv.FormatInt(spacing, 10), "", nil)
	require.Contains(t, string(r.body), "differ in their bytes only")
	require.Regexp(t, regexp.QuoteMeta(`<td class="del">{&#34;a&#34;:1}</td>`), string(r.body))

	// The stored delivery deleted by retention: the conflicting body alone.
	_, err := b.pool.Exec(context.Background(), "DELETE FROM inbox WHERE id = $1", stored)
	require.NoError(t, err)
	r = b.do(t, http.MethodGet, "/console/conflicts/"+strconv.FormatInt(changed, 10), "", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, string(r.body), "no longer in the inbox")
	require.Contains(t, string(r.body), `&#34;amount&#34;:200`)

	for path, want := range map[string]int{"/console/conflicts/424242": http.StatusNotFound, "/console/conflicts?cursor=x": http.StatusBadRequest} {
		r := b.do(t, http.MethodGet, path, "", nil)
		require.Equal(t, want, r.status, path)
		require.Contains(t, string(r.body), `id="error-message"`)
	}
}
