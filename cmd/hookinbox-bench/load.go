package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// generator sends signed GitHub deliveries of one event type to one
// hookinbox. A share of its requests resend a delivery that was already
// accepted, byte for byte, as GitHub does when it retries.
type generator struct {
	url      string
	event    string // X-GitHub-Event of every request
	payloads []payload
	dupShare float64
	client   *fasthttp.HostClient
	conns    int
	acked    *ackLog
}

// ackLog is every 202 so far, for duplicates and the audit; generators of
// one run share it.
type ackLog struct {
	mu       sync.Mutex
	accepted []acceptedDelivery
}

// acceptedDelivery is a 202 and what it promised.
type acceptedDelivery struct {
	ID      string
	InboxID int64 // from the 202's body
	payload int
}

func newGenerator(webhookURL, event string, payloads []payload, conns int, dupShare float64) *generator {
	client := newHostClient(webhookURL, conns)
	return &generator{url: webhookURL, event: event, payloads: payloads, dupShare: dupShare, conns: conns, client: client, acked: &ackLog{}}
}

// newHostClient is a client of the host of rawURL with at most conns
// connections. fasthttp's client: the bench shares the machine with the
// service and the database, and net/http's client cost twice its CPU per
// request. One keep-alive connection per worker and no more: the run
// measures the server at exactly conns concurrent connections.
func newHostClient(rawURL string, conns int) *fasthttp.HostClient {
	u, err := url.Parse(rawURL)
	if err != nil {
		panic(err) // the URL is ours
	}
	return &fasthttp.HostClient{
		Addr:               u.Host,
		MaxConns:           conns,
		MaxConnWaitTimeout: 30 * time.Second,
		// Below the service's idle timeout (60 s), so an idle connection is
		// closed here first and never found dead by the next request.
		MaxIdleConnDuration: 30 * time.Second,
		ReadTimeout:         30 * time.Second,
		WriteTimeout:        30 * time.Second,
		// fasthttp resends a request whose connection broke before the
		// answer; a resent delivery that was stored would come back as a
		// duplicate and hide the failure. Every request is sent once.
		MaxIdemponentCallAttempts: 1,
	}
}

// close closes the generator's idle connections (all of them between
// phases).
func (g *generator) close() { g.client.CloseIdleConnections() }

// withConns is a generator for the same service with conns connections of
// its own, whose duplicates resend deliveries g's accepted and the other
// way round.
func (g *generator) withConns(conns int) *generator {
	n := newGenerator(g.url, g.event, g.payloads, conns, g.dupShare)
	n.acked = g.acked
	return n
}

// loadResult is one phase's responses.
type loadResult struct {
	Mode             string         `json:"mode"` // closed or open loop
	Connections      int            `json:"connections"`
	TargetRate       float64        `json:"target_rate_per_sec,omitempty"`
	Seconds          float64        `json:"seconds"`
	Requests         int64          `json:"requests"`
	Accepted         int64          `json:"accepted"`
	Duplicates       int64          `json:"duplicates"`
	Errors           int64          `json:"errors"`
	ErrorKinds       map[string]int `json:"error_kinds,omitempty"`
	AcceptedPerSec   float64        `json:"accepted_per_sec"`
	DuplicatesPerSec float64        `json:"duplicates_per_sec"`
	RequestsPerSec   float64        `json:"requests_per_sec"`
	Latency          latencies      `json:"latency"`
	WorstSecond      *worstSecond   `json:"worst_second,omitempty"` // open loop only
	SecondP99        []duration     `json:"second_p99,omitempty"`   // open loop: each second's p99, by due time
	LastAck          time.Time      `json:"last_ack"`
	MeanPayloadBytes int            `json:"mean_payload_bytes"`
	ClientLagMax     duration       `json:"client_lag_max,omitempty"` // open loop: how late the dispatcher fell behind its schedule
}

type latencies struct {
	P50 duration `json:"p50"`
	P90 duration `json:"p90"`
	P99 duration `json:"p99"`
	Max duration `json:"max"`
}

// tally is one worker's share of a phase, merged at the end so workers
// never contend on a lock to record a response.
type tally struct {
	requests, accepted, duplicates, errors int64
	errorKinds                             map[string]int
	lat                                    []time.Duration
	due                                    []time.Time // open loop: when each of lat's requests was due
	lastAck                                time.Time
	payloadBytes                           int64
}

// closedLoop runs conns workers that each send the next request as soon as
// the previous one is answered, for d. Requests in flight at the end are
// waited for, so every request sent is counted.
func (g *generator) closedLoop(ctx context.Context, d time.Duration) loadResult {
	start := time.Now()
	end := start.Add(d)
	tallies := make([]*tally, g.conns)
	var wg sync.WaitGroup
	for w := range g.conns {
		t := &tally{errorKinds: map[string]int{}}
		tallies[w] = t
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(w)))
		wg.Go(func() {
			for ctx.Err() == nil && time.Now().Before(end) {
				sent := time.Now()
				if g.send(ctx, rng, t) {
					t.lat = append(t.lat, time.Since(sent))
				}
			}
		})
	}
	wg.Wait()
	res := merge(tallies, time.Since(start))
	res.Mode, res.Connections = "closed", g.conns
	return res
}

// openLoop sends at rate per second for d whatever the answers, from conns
// workers. Latency counts from when a request was due, not when a worker
// got to it, so a service that falls behind shows it in the tail instead of
// slowing the generator down (coordinated omission).
func (g *generator) openLoop(ctx context.Context, rate float64, d time.Duration) loadResult {
	n := int(rate * d.Seconds())
	due := make(chan time.Time, n)
	start := time.Now()
	var lag time.Duration
	go func() {
		defer close(due)
		for i := range n {
			at := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
			if wait := time.Until(at); wait > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			} else {
				lag = max(lag, -wait)
			}
			due <- at
		}
	}()
	tallies := make([]*tally, g.conns)
	var wg sync.WaitGroup
	for w := range g.conns {
		t := &tally{errorKinds: map[string]int{}}
		tallies[w] = t
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(w)+1<<32))
		wg.Go(func() {
			for at := range due {
				if g.send(ctx, rng, t) {
					t.lat = append(t.lat, time.Since(at))
					t.due = append(t.due, at)
				}
			}
		})
	}
	wg.Wait()
	res := merge(tallies, time.Since(start))
	res.Mode, res.Connections, res.TargetRate, res.ClientLagMax = "open", g.conns, rate, duration(lag)
	res.WorstSecond = findWorstSecond(start, tallies)
	res.SecondP99 = secondP99s(start, tallies)
	return res
}

// send makes one request, new or a retry of an accepted delivery, and
// records its outcome in t. It reports false when ctx (the whole run)
// ended the request, which then counts for nothing.
func (g *generator) send(ctx context.Context, rng *rand.Rand, t *tally) bool {
	// fasthttp takes no context: an ended run sends nothing more.
	if ctx.Err() != nil {
		return false
	}
	var (
		id   string
		idx  int
		dup  bool
		orig int64 // a duplicate's inbox id, from its 202
	)
	if rng.Float64() < g.dupShare {
		g.acked.mu.Lock()
		if n := len(g.acked.accepted); n > 0 {
			a := g.acked.accepted[rng.IntN(n)]
			id, idx, dup, orig = a.ID, a.payload, true, a.InboxID
		}
		g.acked.mu.Unlock()
	}
	if !dup {
		id, idx = newGUID(rng), rng.IntN(len(g.payloads))
	}
	p := g.payloads[idx]
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(g.url)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.SetContentType("application/json")
	req.Header.SetUserAgent("GitHub-Hookshot/hookinbox-bench")
	req.Header.Set("X-GitHub-Delivery", id)
	req.Header.Set("X-GitHub-Event", g.event)
	req.Header.Set("X-Hub-Signature-256", p.signature)
	req.SetBodyRaw(p.body)
	// A request in flight when the run ends fails or finishes; ctx
	// decides whether a failure counts.
	if err := g.client.Do(req, resp); err != nil {
		if ctx.Err() != nil {
			return false
		}
		t.count(p)
		t.fail("transport: " + err.Error())
		return true
	}
	t.count(p)
	body, status := resp.Body(), resp.StatusCode()
	var r struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
	}
	switch {
	case status == http.StatusAccepted && !dup:
		if err := json.Unmarshal(body, &r); err != nil || r.Status != "accepted" || r.ID == 0 {
			t.fail("202 with an unexpected body")
			return true
		}
		t.accepted++
		t.lastAck = time.Now()
		g.acked.mu.Lock()
		g.acked.accepted = append(g.acked.accepted, acceptedDelivery{ID: id, InboxID: r.ID, payload: idx})
		g.acked.mu.Unlock()
	case status == http.StatusOK && dup:
		// A retry must name the row its first delivery created.
		if err := json.Unmarshal(body, &r); err != nil || r.Status != "duplicate" || r.ID != orig {
			t.fail("200 without the original's id and status duplicate")
			return true
		}
		t.duplicates++
	case status == http.StatusAccepted:
		t.fail("202 for a retried delivery (duplicate not recognised)")
	case status == http.StatusOK:
		t.fail("200 duplicate for a new delivery id")
	default:
		t.fail("HTTP " + strconv.Itoa(status) + " " + string(bytes.TrimSpace(body[:min(len(body), 120)])))
	}
	return true
}

func (t *tally) count(p payload) {
	t.requests++
	t.payloadBytes += int64(len(p.body))
}

func (t *tally) fail(kind string) {
	t.errors++
	t.errorKinds[kind]++
}

func merge(tallies []*tally, elapsed time.Duration) loadResult {
	res := loadResult{Seconds: elapsed.Seconds(), ErrorKinds: map[string]int{}}
	var (
		lat          []time.Duration
		payloadBytes int64
	)
	for _, t := range tallies {
		res.Requests += t.requests
		res.Accepted += t.accepted
		res.Duplicates += t.duplicates
		res.Errors += t.errors
		for k, v := range t.errorKinds {
			res.ErrorKinds[k] += v
		}
		lat = append(lat, t.lat...)
		if t.lastAck.After(res.LastAck) {
			res.LastAck = t.lastAck
		}
		payloadBytes += t.payloadBytes
	}
	if len(res.ErrorKinds) == 0 {
		res.ErrorKinds = nil
	}
	s := elapsed.Seconds()
	res.AcceptedPerSec = float64(res.Accepted) / s
	res.DuplicatesPerSec = float64(res.Duplicates) / s
	res.RequestsPerSec = float64(res.Requests) / s
	if res.Requests > 0 {
		res.MeanPayloadBytes = int(payloadBytes / res.Requests)
	}
	res.Latency = percentiles(lat)
	return res
}

// worstSecond is the second of an open-loop phase (by due time) that held the
// most of its slowest answers, those at or above the phase's p99. A tail made
// in one short window (an autovacuum round, a stall of the machine) shows as
// a large share of them here, and a p99 of the other answers near the rest of
// the distribution (bench/README.md, "Steady load, one default serve").
type worstSecond struct {
	At         int      `json:"at_s"`        // whole seconds into the phase
	Slow       int      `json:"slow"`        // answers at or above the phase's p99 due in it
	OfSlow     int      `json:"of_slow"`     // all answers at or above the phase's p99
	P99Without duration `json:"p99_without"` // p99 of the answers due outside it
}

// findWorstSecond returns nil when there is nothing to tell apart (no
// answers, or no due times).
func findWorstSecond(start time.Time, tallies []*tally) *worstSecond {
	var lat []time.Duration
	var sec []int
	for _, t := range tallies {
		if len(t.due) != len(t.lat) {
			return nil
		}
		for i, l := range t.lat {
			lat = append(lat, l)
			sec = append(sec, int(t.due[i].Sub(start)/time.Second))
		}
	}
	if len(lat) == 0 {
		return nil
	}
	p99 := time.Duration(percentiles(slices.Clone(lat)).P99)
	slow := map[int]int{}
	w := &worstSecond{At: -1}
	for i, l := range lat {
		if l >= p99 {
			w.OfSlow++
			slow[sec[i]]++
		}
	}
	for s, n := range slow {
		if n > w.Slow || n == w.Slow && s < w.At {
			w.At, w.Slow = s, n
		}
	}
	var rest []time.Duration
	for i, l := range lat {
		if sec[i] != w.At {
			rest = append(rest, l)
		}
	}
	w.P99Without = percentiles(rest).P99
	return w
}

// secondP99s returns the p99 of each second's answers, by due time (zero
// for a second with none); nil without due times. A step held for minutes
// shows in it when its checkpoints and autovacuum rounds came, and how
// many of its seconds were slow.
func secondP99s(start time.Time, tallies []*tally) []duration {
	var bySecond [][]time.Duration
	for _, t := range tallies {
		if len(t.due) != len(t.lat) {
			return nil
		}
		for i, l := range t.lat {
			s := max(int(t.due[i].Sub(start)/time.Second), 0)
			for len(bySecond) <= s {
				bySecond = append(bySecond, nil)
			}
			bySecond[s] = append(bySecond[s], l)
		}
	}
	var p99 []duration
	for _, lat := range bySecond {
		p99 = append(p99, percentiles(lat).P99)
	}
	return p99
}

func percentiles(lat []time.Duration) latencies {
	if len(lat) == 0 {
		return latencies{}
	}
	slices.Sort(lat)
	// Nearest rank: the smallest latency at or above which a share q of
	// the requests fall.
	at := func(q float64) duration {
		i := int(math.Ceil(q*float64(len(lat)))) - 1
		return duration(lat[min(max(i, 0), len(lat)-1)])
	}
	return latencies{P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: duration(lat[len(lat)-1])}
}

// acks returns every delivery accepted so far, by g or a generator made
// with withConns.
func (g *generator) acks() []acceptedDelivery {
	g.acked.mu.Lock()
	defer g.acked.mu.Unlock()
	return slices.Clone(g.acked.accepted)
}

// errorSummary lists error kinds, most frequent first.
func errorSummary(kinds map[string]int) []string {
	type kv struct {
		k string
		v int
	}
	var all []kv
	for k, v := range kinds {
		all = append(all, kv{k, v})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v })
	var out []string
	for _, e := range all {
		out = append(out, fmt.Sprintf("%d× %s", e.v, e.k))
	}
	return out
}
