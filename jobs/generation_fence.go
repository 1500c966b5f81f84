package jobs

import (
	"context"
	"encoding/json"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// fenceLooks × GenerationConfig.Every without a complete look (a publish
// and the look after it) fences a process: it processes nothing until a
// look succeeds. The processes of newer configurations count it gone only
// after generationLiveFactor × Every without a publish (its live_until),
// and then report ready without it (Settle); fenced from well before,
// it never acts on an answer older than their readiness, however long a
// pause, a partition, a stuck pool or a shutdown that ended its looks
// keeps it silent. The margin, 4 looks, absorbs the time a publish takes
// to commit and a database clock that drifts from this process's.
const fenceLooks = 6

// fenceKey is the job metadata key counting the snoozes a fence made, so
// that MaxDeferrals counts only those an outdated process made: jobs
// snoozed while fenced were left to no one in particular, and counting
// them would let the outdated process's fallback process them under its
// configuration sooner than promised.
const fenceKey = "hookinbox_fenced"

// clock is the time since the Generation was made, on the monotonic
// clock: a wall clock set back would not lift a fence early.
func (g *Generation) clock() time.Duration { return time.Since(g.born) }

// looked records a complete look whose publish was sent at sent (clock),
// once its answer is applied (set): from now on the fence waits for the
// next one.
func (g *Generation) looked(sent time.Duration) {
	g.lookedAt.Store(int64(sent))
	g.lookedOnce.Store(true)
	if g.fenceLogged.Swap(false) {
		g.cfg.Logger.Info("looked again: this process processes deliveries as its look says", "this", g.cfg.Fingerprint)
	}
}

// fenced reports whether the last complete look is too old to act on
// (fenceLooks), or none has completed yet: a replica that restarts beside
// a newer configuration it has not yet seen (its Prepare came before the
// newer one's start) would otherwise process under its own while the
// newer one, which does not know of it, reports ready.
func (g *Generation) fenced() bool {
	if !g.lookedOnce.Load() {
		return true
	}
	return g.clock()-time.Duration(g.lookedAt.Load()) > fenceLooks*g.cfg.Every
}

// fence snoozes a processing job while fenced, spending no attempt and
// counting the snooze apart (fenceKey).
func (g *Generation) fence(ctx context.Context, job *rivertype.JobRow) error {
	if g.lookedOnce.Load() && !g.fenceLogged.Swap(true) {
		g.cfg.Logger.Warn("no look for a while: this process leaves deliveries waiting until one succeeds",
			"this", g.cfg.Fingerprint, "after", fenceLooks*g.cfg.Every)
	}
	// Outside River's work (a test calling the middleware) there is no
	// metadata to record.
	_ = river.MetadataSet(ctx, fenceKey, fencedSnoozes(job)+1)
	return river.JobSnooze(g.deferral())
}

// fencedSnoozes is how many of job's snoozes a fence made.
func fencedSnoozes(job *rivertype.JobRow) int {
	var m map[string]json.RawMessage
	var n int
	if json.Unmarshal(job.Metadata, &m) == nil {
		_ = json.Unmarshal(m[fenceKey], &n)
	}
	return n
}
