package drills

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestDatabaseOutage stops PostgreSQL (fast shutdown) in the middle of the
// load and starts it again on the same port: hookinbox must answer 503,
// never 2xx, while the database is gone, and take deliveries again within
// 5 s of its return, without a restart. Then the database restarts while
// handler transactions are certainly open (blocked on their resource
// lock). Audit.
func TestDatabaseOutage(t *testing.T) {
	if !*longForm {
		t.Parallel()
	}
	var (
		rate     = pick(30.0, 80.0)
		duration = pick(14*time.Second, 60*time.Second)
		outageAt = pick(3*time.Second, 10*time.Second)
		downFor  = pick(3*time.Second, 8*time.Second)
		inTx     = pick(5, 20) // handler transactions open at the second restart
	)
	ctx := context.Background()
	pg, err := newPGCluster(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.destroy)
	b := setup(t, setupOpts{pg: pg})
	p := b.start(t, "hookinbox")

	var (
		wg                    sync.WaitGroup
		downFrom, downTo, up  time.Time // stop returned, start began, start returned
		restartedAt           time.Time
		txRecs                []*record
		blockedErr, faultErrs error
	)
	wg.Go(func() {
		time.Sleep(outageAt)
		if faultErrs = pg.stop(ctx); faultErrs != nil {
			return
		}
		downFrom = time.Now()
		time.Sleep(downFor) // the fault's length, not a wait for a condition
		downTo = time.Now()
		if faultErrs = pg.start(ctx); faultErrs != nil {
			return
		}
		up = time.Now()

		// The second fault: deliveries whose handler transactions are open,
		// blocked on a resource lock the drill holds, when the database
		// goes down and comes back.
		var ds []delivery
		var keys []string
		for i := range inTx {
			d := stripePayment(b.run+"-tx", i)
			ds, keys = append(ds, d), append(keys, stripeLockKey(d.PI))
		}
		locks, err := lockResources(t, b.cfg.DatabaseURL, keys...)
		if err != nil {
			faultErrs = err
			return
		}
		txRecs = b.gen.sendAll(ctx, p.URL, ds)
		if blockedErr = waitBlocked(b.pool, inTx, 15*time.Second); blockedErr != nil {
			return
		}
		if faultErrs = pg.stop(ctx); faultErrs != nil {
			return
		}
		locks.release()
		restartedAt = time.Now()
		faultErrs = pg.start(ctx)
	})
	res := &auditResult{Drill: "database outage"}
	res.Rate = b.gen.load(ctx, loadOpts{
		Rate: rate, Duration: duration, Concurrency: 512, DupFraction: 0.05,
		Target: p.URL, Next: func(n int) delivery { return newDelivery(b.run, n) },
	})
	wg.Wait()
	if faultErrs != nil || blockedErr != nil {
		t.Fatalf("injecting the faults: %v %v", faultErrs, blockedErr)
	}

	// While the database was down: 503 and never a 2xx.
	unavailable, firstAck := 0, time.Time{}
	for _, r := range b.gen.Records() {
		for _, a := range r.Answers() {
			inOutage := !a.Start.Before(downFrom) && !a.End.After(downTo)
			if inOutage && a.acked() {
				res.problem("%s %s: %d %s while the database was down", r.D.Source, r.D.ID, a.Status, a.Outcome)
			}
			if inOutage && a.Status == 503 {
				unavailable++
			}
			if a.Status == 202 && !a.Start.Before(up) && (firstAck.IsZero() || a.End.Before(firstAck)) {
				firstAck = a.End
			}
		}
	}
	if unavailable == 0 {
		t.Errorf("no 503 seen during the %s outage: the drill did not exercise it", downFor)
	}
	recovery := firstAck.Sub(up)
	if firstAck.IsZero() || recovery > 5*time.Second {
		t.Errorf("first 202 came %s after the database returned (want ≤ 5s)", recovery)
	}
	var txIDs []int64
	for _, r := range txRecs {
		ok, id := r.Acked()
		if !ok {
			t.Errorf("%s was not acknowledged before the restart", r.D.ID)
		}
		txIDs = append(txIDs, id)
	}

	stranded := rescue(t, b.pool, p, restartedAt)
	retried, err := retriedJobs(ctx, b.pool, txIDs)
	if err != nil {
		t.Fatal(err)
	}
	if retried != inTx {
		t.Errorf("%d of the %d handler transactions cut by the restart ran again; want all", retried, inTx)
	}
	*res = mergeAudit(res, audit(t, b.pool, b.stub, b.gen))
	res.Faults = fmt.Sprintf("PostgreSQL down %.0f s (%d × 503, first 202 %d ms after its return); restart with %d handler txs open%s",
		downTo.Sub(downFrom).Seconds(), unavailable, recovery.Milliseconds(), inTx, describeStranded(stranded))
	if stranded > 0 {
		res.problem("%d jobs stranded by a database restart, though no process died", stranded)
	}
	res.report(t)
}
