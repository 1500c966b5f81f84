package drills

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// replayer asks the admin API to replay stored deliveries while the drill
// runs, as an operator clicking "replay" would. Each replay carries its own
// Idempotency-Key and is retried with it while hookinbox is down.
type replayer struct {
	client    *http.Client
	admin     func() string // admin base URL
	run       string
	requested atomic.Int64
	accepted  atomic.Int64 // 202, or a stored answer replayed
	failed    atomic.Int64 // a final answer other than 202
	// abandoned replays kept getting 409 request_in_progress: a killed
	// process held their key, which the contract frees after 2 minutes.
	abandoned atomic.Int64
}

func newReplayer(run string, admin func() string) *replayer {
	return &replayer{client: &http.Client{Timeout: 10 * time.Second}, admin: admin, run: run}
}

// replay replays inbox row id, retrying connection errors, 5xx and "in
// progress" with the same key, within a bounded number of attempts.
func (r *replayer) replay(ctx context.Context, id int64) {
	n := r.requested.Add(1)
	key := fmt.Sprintf("%s-replay-%d", r.run, n)
	delay := 100 * time.Millisecond
	inProgress := false
	for i := 0; i < 30 && ctx.Err() == nil; i++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("%s/admin/deliveries/%d/replay", r.admin(), id), nil)
		req.Header.Set("Authorization", "Bearer "+adminToken)
		req.Header.Set("Idempotency-Key", key)
		resp, err := r.client.Do(req)
		inProgress = false
		if err == nil {
			resp.Body.Close()
			inProgress = resp.StatusCode == http.StatusConflict
			switch {
			case resp.StatusCode == http.StatusAccepted:
				r.accepted.Add(1)
				return
			case resp.StatusCode < 500 && resp.StatusCode != http.StatusConflict:
				r.failed.Add(1)
				return
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Second)
	}
	if inProgress {
		r.abandoned.Add(1)
		return
	}
	r.failed.Add(1)
}

func (r *replayer) describeAbandoned() string {
	if n := r.abandoned.Load(); n > 0 {
		return fmt.Sprintf(" (%d more held by a killed process's key lock)", n)
	}
	return ""
}

// loop replays a random acked delivery of g every interval until ctx
// ends, then waits for the replays in flight, which outlive ctx: an
// operator's retry does not stop because the load did.
func (r *replayer) loop(ctx context.Context, g *generator, interval time.Duration) {
	var wg sync.WaitGroup
	defer wg.Wait()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		recs := g.Records()
		if len(recs) == 0 {
			continue
		}
		if ok, id := recs[rand.IntN(len(recs))].Acked(); ok && id > 0 {
			wg.Go(func() { r.replay(context.WithoutCancel(ctx), id) })
		}
	}
}
