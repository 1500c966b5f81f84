package cli

import (
	"errors"
	"log/slog"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// serveGCPercent is the garbage collector's target for serve when GOGC is not
// set. serve's live heap is small (the requests and batches in flight, a few
// MB), so Go's default of 100 collects several times a second under load, a
// large share of the ingest process's CPU in bench profiles. At 400 the bench
// measured less CPU per request for a somewhat larger peak RSS
// (bench/README.md, Design decisions, "Memory and garbage collection").
const serveGCPercent = 400

// serveMemLimit is serve's soft memory limit (GOMEMLIMIT) where no container
// limit says otherwise. At serveGCPercent the heap grows to five times what
// is live before a collection: a worker draining a backlog held several times
// its live heap in RSS. Under this limit the collector runs early only when
// the heap nears it, and the drain keeps its rate (bench/README.md, Design
// decisions, "Memory and garbage collection"). Memory that is live stays
// usable past it: the limit is soft, and Go caps the collector's share of CPU
// near it.
const serveMemLimit = 112 << 20

// gcTuning is what tuneGC needs to know besides the environment.
type gcTuning struct {
	// limits says where the container's memory limit comes from
	// (memlimit.FromCgroup).
	limits memlimit.Provider
	// embeddedDatabase: PostgreSQL runs in the same container and shares
	// its limit, so a share of it for Go alone would be a guess.
	embeddedDatabase bool
}

// tuneGC applies serveGCPercent unless the operator chose with GOGC, which
// the runtime has applied already. The heap may then grow to five times
// what is live, so it also sets a soft limit (GOMEMLIMIT), unless
// GOMEMLIMIT is set or AUTOMEMLIMIT is off: 90% of the container's memory
// limit when there is one and the database is not the embedded one (which
// shares it), else serveMemLimit. Near the limit the collector works
// harder instead of the process growing or being killed. automemlimit
// also reads its own AUTOMEMLIMIT as a share, such as 0.8.
func tuneGC(lookup func(string) (string, bool), logger *slog.Logger, t gcTuning) {
	if _, set := lookup("GOGC"); set {
		return
	}
	debug.SetGCPercent(serveGCPercent)
	if _, set := lookup("GOMEMLIMIT"); set {
		return
	}
	if v, _ := lookup("AUTOMEMLIMIT"); v == "off" {
		return // the operator turned automatic limits off: none at all
	}
	if !t.embeddedDatabase && containerLimit(logger, t.limits) {
		return
	}
	debug.SetMemoryLimit(serveMemLimit)
}

// containerLimit sets the soft limit from the container's, and reports
// whether it did.
func containerLimit(logger *slog.Logger, limits memlimit.Provider) bool {
	limit, err := memlimit.SetGoMemLimitWithOpts(memlimit.WithProvider(limits), memlimit.WithRatio(0.9))
	switch {
	case errors.Is(err, memlimit.ErrNoCgroup), errors.Is(err, memlimit.ErrCgroupsNotSupported):
		// Not in a container (or not Linux): no limit to follow.
		logger.Debug("no cgroup memory limit to follow", "error", err)
	case err != nil:
		logger.Warn("could not read the container's memory limit", "error", err)
	case limit > 0:
		logger.Info("soft memory limit set from the container's", "gomemlimit_bytes", limit)
		return true
	}
	return false
}
