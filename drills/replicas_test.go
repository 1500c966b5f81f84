package drills

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestReplicaRace runs three hookinbox processes on one database and sends
// every delivery to all three at once, several times: the unique
// constraint must make exactly one row and one effect of each, one 202 and
// nothing but 200 duplicates after it.
func TestReplicaRace(t *testing.T) {
	if !*longForm {
		t.Parallel()
	}
	var (
		rate     = pick(15.0, 40.0)
		duration = pick(8*time.Second, 45*time.Second)
		rounds   = 3
	)
	b := setup(t, setupOpts{})
	// The first migrates; the others find the schema in place.
	replicas := []*proc{b.start(t, "replica-1")}
	for _, name := range []string{"replica-2", "replica-3"} {
		replicas = append(replicas, b.start(t, name, "--migrate=false"))
	}
	targets := make([]func() string, len(replicas))
	for i, p := range replicas {
		targets[i] = p.URL
	}

	res := &auditResult{Drill: "replica race (3 processes)"}
	res.Rate = b.gen.load(context.Background(), loadOpts{
		Rate: rate, Duration: duration, Concurrency: 128,
		Fanout: targets, Rounds: rounds, Next: func(n int) delivery { return newDelivery(b.run, n) },
	})
	if left := settle(t, b.pool, 60*time.Second); !left.empty() {
		t.Errorf("not settled: %s", left)
	}
	*res = mergeAudit(res, audit(t, b.pool, b.stub, b.gen))
	for _, r := range b.gen.Records() {
		accepted := 0
		for _, a := range r.Answers() {
			if a.Status == 202 {
				accepted++
			}
		}
		if accepted != 1 {
			res.problem("%s %s: %d × 202 across the replicas; want exactly 1", r.D.Source, r.D.ID, accepted)
		}
	}
	res.Faults = fmt.Sprintf("each delivery to 3 replicas at once × %d rounds", rounds)
	res.report(t)
}
