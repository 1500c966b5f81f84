package ingest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/metrics"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/verify"
)

// Fiber hands out strings that point into buffers the next request
// reuses. A label taken from the path once renamed the series
// {source="github"} to "gitlab", and the next scrape failed with "was
// collected before with the same name and label values". This is the
// sequence that broke it, then a scrape.
func TestMetricsSurviveOrdinaryTraffic(t *testing.T) {
	t.Parallel()
	forModes(t, func(t *testing.T, opts setupOpts) {
		opts.pool = testdb.New(t)
		m := metrics.New(opts.pool, nil)
		opts.observe = m.ObserveIngest
		b := setupWith(t, opts)

		push := func(n int) {
			body := githubBody(100 + n)
			r := b.post(t, "/webhooks/github", body, githubHeaders(t, githubSecret, fmt.Sprintf("gh-metrics-%d", n), body))
			require.Equal(t, http.StatusAccepted, r.status, "%s", r.raw)
		}
		for i := range 3 {
			push(i)
		}
		for i := range 3 {
			body := stripeBody(fmt.Sprintf("evt_metrics_%d", i))
			r := b.post(t, "/webhooks/stripe", body, signed(t, verify.ProviderStripe, stripeSecret, body, verify.Message{}, time.Now()))
			require.Equal(t, http.StatusAccepted, r.status, "%s", r.raw)
		}
		body := githubBody(99)
		require.Equal(t, http.StatusNotFound, b.post(t, "/webhooks/gitlab", body, githubHeaders(t, githubSecret, "gl-1", body)).status)
		push(3)
		require.Equal(t, http.StatusBadRequest, b.post(t, "/webhooks/stripe", stripeBody("evt_unsigned"), http.Header{}).status)

		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		text, _ := io.ReadAll(rec.Body)
		require.Equal(t, http.StatusOK, rec.Code, "%s", text)
		for _, want := range []string{
			`hookinbox_deliveries_total{outcome="accepted",source="github"} 4`,
			`hookinbox_deliveries_total{outcome="accepted",source="stripe"} 3`,
			`hookinbox_deliveries_total{outcome="unknown_source",source="_unknown"} 1`,
			`hookinbox_deliveries_total{outcome="missing_header",source="stripe"} 1`,
		} {
			require.Contains(t, string(text), want)
		}
		require.NotContains(t, string(text), "gitlab")
		require.Equal(t, 4, strings.Count(string(text), "hookinbox_deliveries_total{"), "%s", text)
	})
}
