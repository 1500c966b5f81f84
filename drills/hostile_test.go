package drills

import (
	"bufio"
	"context"
	"fmt"
	"github.com/hookinbox/hookinbox/internal/procmem"
	"net/http"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestHostileInput sends the hostile table, slow-drip bodies and oversized
// requests, alongside valid traffic. Each hostile request gets its
// documented 4xx and stores nothing; memory stays bounded; valid traffic
// keeps its latency (reported; asserted only against a generous bound).
func TestHostileInput(t *testing.T) {
	if !*longForm {
		t.Parallel()
	}
	const readTimeout, maxBody = 2 * time.Second, 1 << 20
	var (
		rate     = pick(20.0, 50.0)
		baseline = pick(3*time.Second, 20*time.Second)
		hostile  = pick(6*time.Second, 60*time.Second)
		workers  = pick(4, 8)    // hostile senders looping over the table
		drips    = pick(20, 100) // slow-drip connections at once
	)
	b := setup(t, setupOpts{readTimeout: readTimeout, maxBodyBytes: maxBody})
	p := b.start(t, "hookinbox")
	cases := hostileCases(maxBody)
	ctx := context.Background()

	// Each case once, on its own, for a readable failure.
	for _, c := range cases {
		req := c.build()
		a := sendRaw(p.ingest, req.bytes(), 10*time.Second)
		if a.Status != c.want || a.Code != c.code {
			t.Errorf("%s: got %d %q (%v), want %d %q", c.name, a.Status, a.Code, a.Err, c.want, c.code)
		}
		if c.stores && a.Status == http.StatusAccepted {
			b.trackRaw(req, a)
		}
	}
	a := dripRequest(p.ingest, "/webhooks/github", nil, 100, 250*time.Millisecond, 3*readTimeout)
	if a.Status != http.StatusRequestTimeout || a.Took > readTimeout+2*time.Second {
		t.Errorf("slow-drip body: got %d %q after %s (%v), want 408 request_timeout within read_timeout (%s)",
			a.Status, a.Code, a.Took, a.Err, readTimeout)
	}
	_, startPeak, err := procmem.Read(p.PID())
	if err != nil {
		t.Fatal(err)
	}

	// Valid traffic alone, then with the hostile traffic alongside.
	valid := func(d time.Duration) {
		b.gen.load(ctx, loadOpts{Rate: rate, Duration: d, Concurrency: 64, Target: p.URL,
			Next: func(n int) delivery { return newDelivery(b.run, n) }})
	}
	t0 := time.Now()
	valid(baseline)
	t1 := time.Now()
	hctx, stop := context.WithCancel(ctx)
	var (
		wg                 sync.WaitGroup
		sent, wrong, drops atomic.Int64
		wrongMu            sync.Mutex
		wrongs             []string
		peakRSS            atomic.Int64
	)
	var refused []hostileCase // the authentic ones were checked above
	for _, c := range cases {
		if !c.stores {
			refused = append(refused, c)
		}
	}
	for w := range workers {
		wg.Go(func() {
			for i := w; hctx.Err() == nil; i++ {
				c := refused[i%len(refused)]
				a := sendRaw(p.ingest, c.build().bytes(), 10*time.Second)
				sent.Add(1)
				if a.Status != c.want || a.Code != c.code {
					wrong.Add(1)
					wrongMu.Lock()
					wrongs = append(wrongs, fmt.Sprintf("%s: %d %q %v", c.name, a.Status, a.Code, a.Err))
					wrongMu.Unlock()
				}
			}
		})
	}
	for range drips {
		wg.Go(func() {
			for hctx.Err() == nil {
				a := dripRequest(p.ingest, "/webhooks/stripe", nil, 1000, 100*time.Millisecond, 3*readTimeout)
				drops.Add(1)
				if a.Status != http.StatusRequestTimeout {
					wrong.Add(1)
				}
			}
		})
	}
	wg.Go(func() {
		for hctx.Err() == nil {
			if rss, _, err := procmem.Read(p.PID()); err == nil && rss > peakRSS.Load() {
				peakRSS.Store(rss)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	valid(hostile)
	t2 := time.Now()
	stop()
	wg.Wait()
	_, endPeak, err := procmem.Read(p.PID())
	if err != nil {
		t.Fatal(err)
	}

	if n := wrong.Load(); n > 0 {
		t.Errorf("%d hostile requests got an answer other than their documented one; first: %v", n, wrongs[:min(len(wrongs), 10)])
	}
	p99a, p99b := percentile(b.gen.latencies(t0, t1), 99), percentile(b.gen.latencies(t1, t2), 99)
	t.Logf("valid traffic p99: %s alone, %s alongside %d hostile requests and %d slow-drip connections cut off; RSS peak %d MiB → %d MiB (sampled max %d MiB)",
		p99a, p99b, sent.Load(), drops.Load(), startPeak>>10, endPeak>>10, peakRSS.Load()>>10)
	if p99b > 2*time.Second {
		t.Errorf("valid traffic p99 rose to %s under hostile traffic (bound: 2s)", p99b)
	}
	if endPeak-startPeak > 256<<10 {
		t.Errorf("RSS peak grew by %d MiB under hostile traffic (bound: 256 MiB)", (endPeak-startPeak)>>10)
	}
	announced := announcedBodies(t, p, maxBody, func(d time.Duration) time.Duration {
		start := time.Now()
		valid(d)
		return percentile(b.gen.latencies(start, time.Now()), 99)
	})
	t.Log(announced)
	b.requireNothingStored(t)
	b.requireBoundedLabels(t, p)

	if left := settle(t, b.pool, 60*time.Second); !left.empty() {
		t.Errorf("not settled: %s", left)
	}
	res := mergeAudit(&auditResult{Drill: "hostile input", Rate: rate,
		Faults: fmt.Sprintf("%d hostile requests (%d kinds), %d slow-drip connections cut off; valid p99 %d → %d ms; RSS peak %d MiB; %s",
			sent.Load(), len(refused), drops.Load(), p99a.Milliseconds(), p99b.Milliseconds(), endPeak>>10, announced)},
		audit(t, b.pool, b.stub, b.gen))
	res.report(t)
}

// trackRaw records an authentic hostile-looking GitHub delivery that was
// stored, so the audit expects its row.
func (b *bundle) trackRaw(req rawRequest, a rawAnswer) {
	d := delivery{Source: "github", Body: req.Body}
	for _, h := range req.Header {
		switch http.CanonicalHeaderKey(h[0]) {
		case "X-Github-Delivery":
			d.ID = h[1]
		case "X-Github-Event":
			d.Event = h[1]
		}
	}
	b.gen.track(d).add(answer{Status: a.Status, Outcome: a.Code})
}

// requireNothingStored checks that the inbox holds exactly what was
// acknowledged, stored verbatim, and one processing job per row.
func (b *bundle) requireNothingStored(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	acked := map[string]delivery{}
	for _, r := range b.gen.Records() {
		if ok, _ := r.Acked(); ok {
			acked[r.D.Source+" "+r.D.ID] = r.D
		}
	}
	rows, err := b.pool.Query(ctx, `SELECT source, delivery_id, event_type FROM inbox`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var src, id, event string
		if err := rows.Scan(&src, &id, &event); err != nil {
			t.Fatal(err)
		}
		n++
		d, ok := acked[src+" "+id]
		switch {
		case !ok:
			t.Errorf("stored without an acknowledgement: %s %.60q", src, id)
		case d.Event != event:
			t.Errorf("%s %.60q stored with event %q, sent %q", src, id, event, d.Event)
		}
	}
	rows.Close()
	var jobs int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM inbox i
		WHERE EXISTS (SELECT 1 FROM delivery_job_ids(i.id))`).Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if n != len(acked) || jobs != n {
		t.Errorf("inbox rows %d, rows with a processing job %d; want %d each", n, jobs, len(acked))
	}
}

var sourceLabel = regexp.MustCompile(`^hookinbox_deliveries_total\{.*source="([^"]*)"`)

// requireBoundedLabels checks that no source name from a URL became a
// metric label.
func (b *bundle) requireBoundedLabels(t *testing.T, p *proc) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, p.AdminURL()+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	allowed := map[string]bool{"github": true, "stripe": true, "billing": true, "_unknown": true}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if m := sourceLabel.FindStringSubmatch(sc.Text()); m != nil && !allowed[m[1]] {
			t.Errorf("metric label source=%.40q came from a request", m[1])
		}
	}
}
