package admin_test

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/jobs"
)

var consoleBench = flag.Bool("console.bench", false, "run BenchmarkConsolePages (seeds 1,000,000 deliveries, about a minute)")

// BenchmarkConsolePages seeds 1,000,000 deliveries (testdata/
// console_bench_seed.sql) and times each console page as the server
// answers it over loopback. Not a timed test: run it by hand,
//
//	go test ./internal/admin/ -run '^$' -bench ConsolePages -console.bench -benchtime 20x
func BenchmarkConsolePages(b *testing.B) {
	if !*consoleBench {
		b.Skip("seeds 1,000,000 rows: run with -console.bench")
	}
	ctx := context.Background()
	pool := testdb.New(b)
	seed, err := os.ReadFile("testdata/console_bench_seed.sql")
	require.NoError(b, err)
	start := time.Now()
	_, err = pool.Exec(ctx, string(seed))
	require.NoError(b, err)
	_, err = pool.Exec(ctx, "VACUUM ANALYZE")
	require.NoError(b, err)
	b.Logf("seeded 1,000,000 deliveries in %s", time.Since(start).Round(time.Second))

	rc, err := jobs.NewClient(pool, jobs.ClientConfig{InsertOnly: true})
	require.NoError(b, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	srv, err := admin.NewServer(admin.Config{Admin: config.Admin{Token: token, Listen: ln.Addr().String()}, Pool: pool, River: rc,
		Sources: []string{"github", "stripe", "billing"}})
	require.NoError(b, err)
	go srv.Serve(ln) //nolint:errcheck // ends with Shutdown
	b.Cleanup(func() { _ = srv.Shutdown(ctx) })
	base := "http://" + ln.Addr().String()

	var newest int64
	require.NoError(b, pool.QueryRow(ctx, "SELECT max(id) FROM inbox").Scan(&newest))
	day := func(n int) string { return time.Now().AddDate(0, 0, -n).UTC().Format(time.RFC3339) }
	pages := []struct{ name, path string }{
		{"overview", "/console/"},
		{"deliveries", "/console/deliveries"},
		{"deliveries_source", "/console/deliveries?source=stripe"},
		{"deliveries_failed", "/console/deliveries?status=failed"},
		{"deliveries_rare_event", "/console/deliveries?event_type=issue_comment"},
		{"deliveries_resource", "/console/deliveries?source=github&resource=obj_42"},
		{"deliveries_day_20_days_ago", "/console/deliveries?" + url.Values{"since": {day(20)}, "until": {day(19)}}.Encode()},
		{"deliveries_page_deep", "/console/deliveries?cursor=" + url.QueryEscape(cursorFor(500000))},
		{"deliveries_poll", fmt.Sprintf("/console/deliveries/rows?after=%d", newest-5)},
		{"delivery", "/console/deliveries/500000"},
		{"conflicts", "/console/conflicts"},
		{"conflict", "/console/conflicts/500"},
		{"bulk_preview_failed", "/console/bulk-replays/new?status=failed"},
		{"bulk_preview_source", "/console/bulk-replays/new?source=github"},
		{"bulk_progress_100000", "/console/bulk-replays/1"},
	}
	client := &http.Client{Timeout: 30 * time.Second}
	for _, p := range pages {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				req, err := http.NewRequest(http.MethodGet, base+p.path, nil)
				require.NoError(b, err)
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := client.Do(req)
				require.NoError(b, err)
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				require.Equal(b, http.StatusOK, resp.StatusCode, p.path)
			}
		})
	}
}

// cursorFor is the list's cursor after id, as the API makes it.
func cursorFor(id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("id:" + strconv.FormatInt(id, 10)))
}
