package drills

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/downstreamstub"
)

// TestWorkerDeathBetweenEffectAndAck kills hookinbox with SIGKILL where a
// worker has done something but not yet recorded it:
//
//  1. while fulfillment calls and destination sends are in flight: the
//     stub has applied their effect and stalls the response; the process
//     dies; the restarted one makes them again with the same key and the
//     stub applies nothing new;
//  2. while handler transactions are open (blocked on a resource lock the
//     drill holds): their ledger credit and the job's completion roll back
//     together and happen once on the retry;
//  3. around commits: bursts of payments, killed as soon as the first of a
//     burst is committed, so that others are mid-commit.
func TestWorkerDeathBetweenEffectAndAck(t *testing.T) {
	if !*longForm {
		t.Parallel()
	}
	var (
		inFlight = pick(5, 20) // fulfillment calls in flight at the kill
		openTx   = pick(5, 20) // handler transactions open at the kill
		bursts   = pick(3, 10) // kills around commits
		burst    = pick(20, 50)
	)
	// The stalled call must still be in flight when the process dies.
	b := setup(t, setupOpts{downstreamTimeout: 30 * time.Second})
	p := b.start(t, "hookinbox")
	ctx := context.Background()
	began := time.Now()
	var lastKill time.Time
	kill := func() {
		p.kill()
		lastKill = time.Now()
		if err := p.restart(); err != nil {
			t.Fatal(err)
		}
	}

	// 1. Effect applied downstream, response not yet received.
	stalls := make([]downstreamstub.Action, inFlight)
	for i := range stalls {
		stalls[i] = downstreamstub.ApplyThenStall
	}
	b.stub.Script(fulfillPath, stalls...) // then Apply: the downstream answers again
	b.stub.Script(forwardPath, stalls...) // billing's destination: sends in flight too
	var ds []delivery
	for i := range inFlight {
		ds = append(ds, stripePayment(b.run+"-call", i), billingInvoice(b.run+"-send", i))
	}
	b.gen.sendAll(ctx, p.URL, ds)
	if !waitFor(ctx, 30*time.Second, 20*time.Millisecond, func() bool {
		return len(b.stub.Requests(fulfillPath)) >= inFlight && len(b.stub.Requests(forwardPath)) >= inFlight
	}) {
		t.Fatalf("only %d of %d fulfillment calls and %d of %d destination sends reached the stub",
			len(b.stub.Requests(fulfillPath)), inFlight, len(b.stub.Requests(forwardPath)), inFlight)
	}
	kill()

	// 2. Handler transactions open.
	ds = ds[:0]
	var keys []string
	for i := range openTx {
		d := stripePayment(b.run+"-tx", i)
		ds, keys = append(ds, d), append(keys, stripeLockKey(d.PI))
	}
	locks, err := lockResources(t, b.cfg.DatabaseURL, keys...)
	if err != nil {
		t.Fatal(err)
	}
	b.gen.sendAll(ctx, p.URL, ds)
	if err := waitBlocked(b.pool, openTx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	kill()
	locks.release()

	// 3. Around commits.
	for k := range bursts {
		ds = ds[:0]
		for i := range burst {
			ds = append(ds, stripePayment(fmt.Sprintf("%s-burst%d", b.run, k), i))
		}
		first := make(chan struct{})
		go func() {
			recs := b.gen.sendAll(ctx, p.URL, ds)
			defer close(first)
			ids := make([]int64, 0, len(recs))
			for _, r := range recs {
				if ok, id := r.Acked(); ok {
					ids = append(ids, id)
				}
			}
			waitFor(ctx, 10*time.Second, time.Millisecond, func() bool {
				var n int
				_ = b.pool.QueryRow(ctx, `SELECT count(*) FROM delivery WHERE id = ANY($1) AND status = 'processed'`, ids).Scan(&n)
				return n > 0
			})
		}()
		<-first
		kill()
	}

	stranded := rescue(t, b.pool, p, lastKill)
	head := &auditResult{Drill: "worker death (kill -9 mid-effect)", Rate: float64(len(b.gen.Records())) / time.Since(began).Seconds()}
	res := mergeAudit(head, audit(t, b.pool, b.stub, b.gen))
	// Every call that was in flight was made again, with the same key.
	calls := map[string]int{}
	for _, r := range b.stub.Requests(fulfillPath) {
		calls[r.Key]++
	}
	retriedSameKey := 0
	for i := range inFlight {
		if calls[fulfillKey(stripePayment(b.run+"-call", i).ID)] >= 2 {
			retriedSameKey++
		}
	}
	if retriedSameKey != inFlight {
		res.problem("%d of %d interrupted fulfillment calls were retried with their key", retriedSameKey, inFlight)
	}
	sends := map[string]int{}
	for _, r := range b.stub.Requests(forwardPath) {
		sends[r.Key]++
	}
	resentSameKey := 0
	for i := range inFlight {
		if sends[forwardKey(billingInvoice(b.run+"-send", i).ID)] >= 2 {
			resentSameKey++
		}
	}
	if resentSameKey != inFlight {
		res.problem("%d of %d interrupted destination sends were made again with their key", resentSameKey, inFlight)
	}
	res.Faults = fmt.Sprintf("%d × kill -9: %d calls and %d destination sends in flight (all made again, same key), %d handler txs open, %d bursts mid-commit%s",
		p.Kills(), inFlight, inFlight, openTx, bursts, describeStranded(stranded))
	res.report(t)
}
