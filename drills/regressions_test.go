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
// jobs.rescue_stuck_after (default 2m); the drill sets it to 15 s. River's
// rescuer itself runs every 30 s, hence the long form only.
func TestStrandedJobRescuedAfterCrash(t *testing.T) {
	if !*longForm {
		t.Skip("waits for River's stuck-job rescue (about a minute); run with -drills.long")
	}
	t.Parallel()
	b := setup(t, setupOpts{jobTimeout: 10 * time.Second, rescueStuckAfter: 15 * time.Second})
	p := b.start(t, "hookinbox")
	d := stripePayment(b.run, 1)
	// Hold the payment intent's resource lock so the job is certainly
	// running, inside its handler transaction, when the process dies.
	locks, err := lockResources(t, b.cfg.DatabaseURL, stripeLockKey(d.PI))
	if err != nil {
		t.Fatal(err)
	}
	rec := b.gen.sendAll(context.Background(), p.URL, []delivery{d})[0]
	acked, id := rec.Acked()
	if !acked {
		t.Fatal("not acknowledged")
	}
	if err := waitBlocked(b.pool, 1, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	p.kill()
	locks.release()
	if err := p.restart(); err != nil {
		t.Fatal(err)
	}

	var status, jobState string
	ok := waitFor(context.Background(), 90*time.Second, 200*time.Millisecond, func() bool {
		_ = b.pool.QueryRow(context.Background(), `SELECT i.status, j.state FROM delivery i
			JOIN river_job j ON j.id IN (SELECT delivery_job_ids(i.id))
			WHERE i.id = $1 ORDER BY j.id DESC LIMIT 1`, id).Scan(&status, &jobState)
		return status == "processed"
	})
	if !ok {
		t.Errorf("acknowledged delivery %d is still %q 90 s after the restart; its job is %q "+
			"(River should have rescued it after jobs.rescue_stuck_after)", id, status, jobState)
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
