package drills

import (
	"context"
	"testing"
	"time"
)

// Regression drills for product bugs the drills found.

// TestStrandedJobRescuedAfterCrash: a delivery whose processing job was
// running when its process was killed used to stay "received" for an hour
// after the restart, because River rescues a job left running only after
// RescueStuckJobsAfter (River's default: 1 h). hookinbox now sets it from
// jobs.rescue_stuck_after (default 2m); the drill sets it to seconds, and
// waits for River's own rescue: no job clock is moved, so without the
// setting the job would stay running for an hour and the drill fails.
//
// River's rescuer runs once when its process starts leading, then every
// 30 s. The short form keeps the killed process down until the job has been
// running longer than jobs.rescue_stuck_after, so the restarted process's
// first rescue finds it stuck. The long form restarts at once and waits
// for a later run of the rescuer.
func TestStrandedJobRescuedAfterCrash(t *testing.T) {
	t.Parallel()
	var (
		jobTimeout  = pick(5*time.Second, 10*time.Second)
		rescueAfter = pick(8*time.Second, 15*time.Second)
		// Past the rescue: the old leader's lease running out (up to 15 s),
		// River's rescuer and scheduler runs, the retry's backoff.
		processedWithin = pick(60*time.Second, 90*time.Second)
	)
	b := setup(t, setupOpts{jobTimeout: jobTimeout, rescueStuckAfter: rescueAfter})
	p := b.start(t, "hookinbox")
	ctx := context.Background()
	d := stripePayment(b.run, 1)
	// Hold the payment intent's resource lock so the job is certainly
	// running, inside its handler transaction, when the process dies.
	locks, err := lockResources(t, b.cfg.DatabaseURL, stripeLockKey(d.PI))
	if err != nil {
		t.Fatal(err)
	}
	rec := b.gen.sendAll(ctx, p.URL, []delivery{d})[0]
	acked, id := rec.Acked()
	if !acked {
		t.Fatal("not acknowledged")
	}
	if err := waitBlocked(b.pool, 1, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	p.kill()
	locks.release()

	// The job must be left running by the kill; one that already ended
	// (its timeout cut it off first) would be retried without any rescue.
	var jobID int64
	err = b.pool.QueryRow(ctx, `SELECT j.id FROM river_job j
		WHERE j.id IN (SELECT delivery_job_ids($1)) AND j.state = 'running'`, id).Scan(&jobID)
	if err != nil {
		t.Fatalf("delivery %d's job is not left running by the kill: %v", id, err)
	}
	if !*longForm && !waitFor(ctx, rescueAfter+30*time.Second, 200*time.Millisecond, func() bool {
		var stuck bool
		_ = b.pool.QueryRow(ctx, `SELECT state = 'running' AND attempted_at < now() - $2::interval
			FROM river_job WHERE id = $1`, jobID, rescueAfter+time.Second).Scan(&stuck)
		return stuck
	}) {
		t.Fatalf("job %d did not stay running for %s after the kill", jobID, rescueAfter)
	}
	if err := p.restart(); err != nil {
		t.Fatal(err)
	}

	var status, jobState string
	ok := waitFor(ctx, processedWithin, 200*time.Millisecond, func() bool {
		_ = b.pool.QueryRow(ctx, `SELECT i.status, j.state FROM delivery i, river_job j
			WHERE i.id = $1 AND j.id = $2`, id, jobID).Scan(&status, &jobState)
		return status == "processed" && jobState == "completed"
	})
	if !ok {
		t.Errorf("acknowledged delivery %d is still %q %s after the restart; its job %d is %q "+
			"(River should have rescued it after jobs.rescue_stuck_after, %s)", id, status, processedWithin, jobID, jobState, rescueAfter)
	}
}

// TestInvalidUTF8InBodyIDRefused: a signed Stripe event whose id holds
// invalid UTF-8 used to be accepted (202) and stored under an id with
// U+FFFD in place of the invalid bytes, which the provider never sent:
// encoding/json replaces them before verify's id check saw the string. It
// now gets 400 invalid_payload and nothing is stored.
func TestInvalidUTF8InBodyIDRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOpts{})
	p := b.start(t, "hookinbox")
	for _, id := range []string{"evt_repro_\xff", "evt_repro_\xfe"} {
		a := sendRaw(p.ingest, stripe(stripeBody(id), time.Now(), stripeSecret).bytes(), 10*time.Second)
		if a.Status != 400 || a.Code != "invalid_payload" {
			t.Errorf("id %q: got %d %q, want 400 invalid_payload", id, a.Status, a.Code)
		}
	}
	var stored []string
	rows, err := b.pool.Query(context.Background(), `SELECT delivery_id FROM inbox`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		_ = rows.Scan(&s)
		stored = append(stored, s)
	}
	rows.Close()
	if len(stored) > 0 {
		t.Errorf("stored: %q", stored)
	}
}
