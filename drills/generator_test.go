package drills

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync"
	"time"
)

// answer is what one HTTP attempt got.
type answer struct {
	Target     string
	Start, End time.Time
	Status     int    // 0: no answer (refused, reset, timed out)
	Outcome    string // "accepted", "duplicate", or the error code
	InboxID    int64
	Err        string
}

func (a answer) acked() bool { return a.Status == http.StatusOK || a.Status == http.StatusAccepted }

// retryable is what a provider retries: no answer or a 5xx.
func (a answer) retryable() bool { return a.Status == 0 || a.Status >= 500 }

// record is one delivery and every answer it got.
type record struct {
	D       delivery
	mu      sync.Mutex
	answers []answer
}

func (r *record) add(a answer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers = append(r.answers, a)
}

func (r *record) Answers() []answer {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]answer(nil), r.answers...)
}

// Acked reports whether any attempt got a 2xx, and the inbox id it named.
func (r *record) Acked() (bool, int64) {
	a, ok := r.firstAck()
	return ok, a.InboxID
}

// firstAck is the first attempt that got a 2xx: its End is when the
// delivery was acknowledged.
func (r *record) firstAck() (answer, bool) {
	for _, a := range r.Answers() {
		if a.acked() {
			return a, true
		}
	}
	return answer{}, false
}

// generator signs and sends deliveries like GitHub and Stripe do, retrying
// any attempt that got no answer or a 5xx with backoff, and records every
// answer.
type generator struct {
	client      *http.Client
	maxAttempts int           // per delivery and target
	firstDelay  time.Duration // first retry delay, doubling
	maxDelay    time.Duration

	mu      sync.Mutex
	records []*record
	n       int
}

func newGenerator() *generator {
	return &generator{
		client: &http.Client{
			Timeout:   10 * time.Second, // above hookinbox's 5 s store timeout
			Transport: &http.Transport{MaxIdleConnsPerHost: 256, IdleConnTimeout: 30 * time.Second},
		},
		maxAttempts: 40,
		firstDelay:  100 * time.Millisecond,
		maxDelay:    time.Second,
	}
}

// track registers d and returns its record.
func (g *generator) track(d delivery) *record {
	r := &record{D: d}
	g.mu.Lock()
	g.records = append(g.records, r)
	g.mu.Unlock()
	return r
}

// Records returns every delivery tracked so far.
func (g *generator) Records() []*record {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]*record(nil), g.records...)
}

// post makes one signed attempt.
func (g *generator) post(ctx context.Context, target string, d delivery) answer {
	a := answer{Target: target, Start: time.Now()}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target+"/webhooks/"+d.Source, bytes.NewReader(d.Body))
	if err != nil {
		panic(err)
	}
	req.Header = sign(d, a.Start)
	resp, err := g.client.Do(req)
	if err != nil {
		a.End, a.Err = time.Now(), err.Error()
		return a
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	a.End = time.Now()
	if err != nil {
		// The status arrived but the body did not: for a provider that is
		// no answer, and it retries.
		a.Err = "reading body: " + err.Error()
		return a
	}
	a.Status = resp.StatusCode
	var parsed struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
		Error  struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &parsed)
	a.InboxID, a.Outcome = parsed.ID, parsed.Status
	if a.Outcome == "" {
		a.Outcome = parsed.Error.Code
	}
	return a
}

// deliver sends rec's delivery to target until an attempt gets a 2xx or a
// 4xx, or maxAttempts or ctx run out, and returns the last answer.
func (g *generator) deliver(ctx context.Context, rec *record, target func() string) answer {
	delay := g.firstDelay
	var a answer
	for i := 0; i < g.maxAttempts; i++ {
		a = g.post(ctx, target(), rec.D)
		if ctx.Err() != nil && a.Status == 0 {
			return a // the drill is over; this attempt does not count
		}
		rec.add(a)
		if !a.retryable() {
			return a
		}
		jitter := time.Duration(rand.Int64N(int64(delay)/2 + 1))
		select {
		case <-ctx.Done():
			return a
		case <-time.After(delay + jitter):
		}
		delay = min(2*delay, g.maxDelay)
	}
	return a
}

// fanout sends rec to every target at once, rounds times.
func (g *generator) fanout(ctx context.Context, rec *record, targets []func() string, rounds int) {
	for range rounds {
		var wg sync.WaitGroup
		for _, target := range targets {
			wg.Go(func() { g.deliver(ctx, rec, target) })
		}
		wg.Wait()
	}
}

// loadOpts shapes a run of new deliveries.
type loadOpts struct {
	Rate        float64       // new deliveries per second
	Duration    time.Duration // how long new deliveries start
	Concurrency int           // deliveries in flight at most, retries included
	DupFraction float64       // share of acked deliveries the provider sends again
	Target      func() string // ingest base URL, asked on every attempt
	Next        func(n int) delivery
	// Fanout, when set, replaces Target: every delivery goes to all of
	// these at once, Rounds times (a provider and its retries reaching
	// several replicas).
	Fanout []func() string
	Rounds int
	// Burst starts deliveries in groups of this many at once, the rate
	// unchanged, as a provider catching up or a busy repository sends
	// them: a group shares an ingest batch, and so a processing job
	// (ingest.job_per_batch). 0 or 1: evenly.
	Burst int
	// Until, when set, keeps new deliveries starting after Duration until
	// it is closed: load that outlasts the faults, whenever they end.
	Until <-chan struct{}
}

// load starts deliveries at o.Rate for o.Duration, each retried as a
// provider would, and returns when every one has settled. It returns how
// many deliveries started per second.
func (g *generator) load(ctx context.Context, o loadOpts) float64 {
	sem := make(chan struct{}, o.Concurrency)
	var wg sync.WaitGroup
	interval := time.Duration(float64(time.Second) / o.Rate)
	start := time.Now()
	started := 0
	burst := max(o.Burst, 1)
	more := func() bool {
		if time.Since(start) < o.Duration {
			return true
		}
		select {
		case <-o.Until: // nil when unset: never ready
			return false
		default:
			return o.Until != nil
		}
	}
	for n := 0; more() && ctx.Err() == nil; n++ {
		// Pace against the clock, so a slow moment is made up for.
		if wait := time.Until(start.Add(time.Duration(n-n%burst) * interval)); wait > 0 {
			time.Sleep(wait)
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		g.mu.Lock()
		g.n++
		seq := g.n
		g.mu.Unlock()
		rec := g.track(o.Next(seq))
		started++
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if o.Fanout != nil {
				g.fanout(ctx, rec, o.Fanout, o.Rounds)
				return
			}
			if a := g.deliver(ctx, rec, o.Target); a.acked() && rand.Float64() < o.DupFraction {
				g.deliver(ctx, rec, o.Target) // the provider's own duplicate
			}
		}()
	}
	elapsed := time.Since(start)
	wg.Wait()
	return float64(started) / elapsed.Seconds()
}

// sendStats sums up what the generator saw.
type sendStats struct {
	Sent        int // distinct deliveries
	Attempts    int
	Acked       int // deliveries with at least one 2xx
	Accepted    int // 202 answers
	Duplicates  int // 200 duplicate answers: suppressed
	Unavailable int // 503 answers
	NoAnswer    int
	GaveUp      int      // deliveries never acked
	Unexpected  []string // answers valid traffic must never get
}

func (g *generator) stats() sendStats {
	var s sendStats
	for _, r := range g.Records() {
		s.Sent++
		acked := false
		for _, a := range r.Answers() {
			s.Attempts++
			switch {
			case a.Status == http.StatusAccepted && a.Outcome == "accepted":
				s.Accepted++
				acked = true
			case a.Status == http.StatusOK && a.Outcome == "duplicate":
				s.Duplicates++
				acked = true
			case a.Status == http.StatusServiceUnavailable && a.Outcome == "unavailable":
				s.Unavailable++
			case a.Status == 0:
				s.NoAnswer++
			default:
				if len(s.Unexpected) < 20 {
					s.Unexpected = append(s.Unexpected, fmt.Sprintf("%s %s: %d %q %s", r.D.Source, r.D.ID, a.Status, a.Outcome, a.Err))
				}
			}
		}
		if acked {
			s.Acked++
		} else {
			s.GaveUp++
		}
	}
	return s
}

// latencies returns the durations of the acked attempts started in
// [from, to).
func (g *generator) latencies(from, to time.Time) []time.Duration {
	var out []time.Duration
	for _, r := range g.Records() {
		for _, a := range r.Answers() {
			if a.acked() && !a.Start.Before(from) && a.Start.Before(to) {
				out = append(out, a.End.Sub(a.Start))
			}
		}
	}
	return out
}

// percentile returns the p-th percentile (0 < p ≤ 100) of ds, or 0.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

// sendAll tracks and delivers ds concurrently and waits for all of them.
func (g *generator) sendAll(ctx context.Context, target func() string, ds []delivery) []*record {
	recs := make([]*record, len(ds))
	var wg sync.WaitGroup
	for i, d := range ds {
		recs[i] = g.track(d)
		wg.Go(func() { g.deliver(ctx, recs[i], target) })
	}
	wg.Wait()
	return recs
}
