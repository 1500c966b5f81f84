package drills

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookinbox/hookinbox/internal/downstreamstub"
)

// bundle is what every drill starts from: a database, a stub downstream,
// a generator, and the config their hookinbox processes share.
type bundle struct {
	run  string // unique prefix of this drill's delivery ids
	pg   *pgCluster
	pool *pgxpool.Pool // the drill's own, for the audit
	stub *downstreamstub.Server
	gen  *generator
	cfg  serveConfig
}

type setupOpts struct {
	pg                *pgCluster // defaults to the shared cluster
	readTimeout       time.Duration
	maxBodyBytes      int
	downstreamTimeout time.Duration
	jobTimeout        time.Duration // jobs.timeout; default hookinbox's
	rescueStuckAfter  time.Duration // jobs.rescue_stuck_after; default hookinbox's
}

var runCounter atomic.Int64

func setup(t *testing.T, o setupOpts) *bundle {
	t.Helper()
	if o.pg == nil {
		o.pg = sharedPG
	}
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	b := &bundle{
		run:  fmt.Sprintf("%s-%d-%d", name, time.Now().Unix()%100000, runCounter.Add(1)),
		pg:   o.pg,
		stub: downstreamstub.New(t),
		gen:  newGenerator(),
	}
	dbURL := o.pg.newDatabase(t)
	b.pool = openPool(t, dbURL)
	b.cfg = serveConfig{
		DatabaseURL: dbURL, DownstreamURL: b.stub.URL, ReadTimeout: o.readTimeout,
		MaxBodyBytes: o.maxBodyBytes, DownstreamTimeout: o.downstreamTimeout,
		JobTimeout: o.jobTimeout, RescueStuckAfter: o.rescueStuckAfter,
	}
	return b
}

// start starts a hookinbox process on the bundle's database.
func (b *bundle) start(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	return startProc(t, name, b.cfg, args...)
}
