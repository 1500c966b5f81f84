package drills

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// TestCrashDuringLoad kills hookinbox with SIGKILL at random moments while
// deliveries, provider duplicates and admin replays flow, and restarts it.
// The generator retries what got no answer or a 5xx. Nothing acknowledged
// may be lost and nothing may happen twice, and the process must have
// acknowledged and stored deliveries both before the first kill and after
// the last restart: a drill in which nothing was stored proves nothing.
func TestCrashDuringLoad(t *testing.T) {
	if !*longForm {
		t.Parallel()
	}
	var (
		rate     = pick(30.0, 80.0)
		duration = pick(12*time.Second, 120*time.Second)
		kills    = pick(5, 20)
	)
	b := setup(t, setupOpts{})
	p := b.start(t, "hookinbox")
	ctx := context.Background()

	replayCtx, endReplays := context.WithCancel(ctx)
	defer endReplays()
	rep := newReplayer(b.run, p.AdminURL)
	var wg sync.WaitGroup
	wg.Go(func() { rep.loop(replayCtx, b.gen, 250*time.Millisecond) })
	var (
		killErr                         error
		firstKill, lastKill, lastReturn time.Time
		// The load goes on for a while after the last restart, however
		// late it came, so that the restarted process has new work to
		// acknowledge.
		afterFaults = make(chan struct{})
	)
	wg.Go(func() {
		defer close(afterFaults)
		// One kill at a random moment in each slot of the load, so kills
		// land in every phase: startup, steady load, retries catching up.
		// A slot whose moment passed during the last restart kills at once.
		start, slot := time.Now(), duration/time.Duration(kills)
		for i := range kills {
			at := start.Add(time.Duration(i)*slot + slot/4 + time.Duration(rand.Int64N(int64(slot/2))))
			time.Sleep(time.Until(at))
			p.kill()
			lastKill = time.Now()
			if i == 0 {
				firstKill = lastKill
			}
			if killErr = p.restart(); killErr != nil {
				return
			}
			lastReturn = time.Now()
		}
		time.Sleep(pick(time.Second, 5*time.Second)) // the load's tail, not a wait for a condition
	})
	res := &auditResult{Drill: "crash (kill -9)"}
	res.Rate = b.gen.load(ctx, loadOpts{
		Rate: rate, Duration: duration, Concurrency: 256, DupFraction: 0.1, Burst: 8,
		Target: p.URL, Next: func(n int) delivery { return newDelivery(b.run, n) }, Until: afterFaults,
	})
	endReplays()
	wg.Wait()
	if killErr != nil {
		t.Fatal(killErr)
	}
	if p.Kills() != kills {
		t.Fatalf("%d kills; want %d", p.Kills(), kills)
	}

	stranded := rescue(t, b.pool, p, lastKill)
	*res = mergeAudit(res, audit(t, b.pool, b.stub, b.gen))
	res.Faults = fmt.Sprintf("%d × kill -9, %d admin replays%s%s", p.Kills(), rep.accepted.Load(),
		rep.describeAbandoned(), describeStranded(stranded))
	before, after := res.ackedBetween(time.Time{}, firstKill), res.ackedBetween(lastReturn, time.Now())
	t.Logf("acknowledged and stored: %d before the first kill, %d after the last restart", before, after)
	if before == 0 {
		res.problem("no delivery was acknowledged and stored before the first kill")
	}
	if after == 0 {
		res.problem("no delivery was acknowledged and stored after the last restart")
	}
	if f := rep.failed.Load(); f > 0 {
		res.problem("%d admin replays failed", f)
	}
	res.report(t)
}

// mergeAudit keeps head's drill, rate, faults and problems with a's counts
// and problems.
func mergeAudit(head, a *auditResult) auditResult {
	out := *a
	out.Drill, out.Rate, out.Faults = head.Drill, head.Rate, head.Faults
	out.Problems = append(append([]string(nil), head.Problems...), a.Problems...)
	return out
}
