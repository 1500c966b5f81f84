package admin

import (
	"context"
	"net/http"
	"net/http/pprof"
	"strings"

	"github.com/hookinbox/hookinbox/jobs"
)

// mountAPI adds the admin API's routes, each with the scope a token needs
// (docs/admin.md, Scopes, lists them).
func (s *Server) mountAPI() {
	pool := s.cfg.Pool
	s.route(get, "/readyz", ScopeRead, s.readyz)
	s.route(get, "/admin/openapi.json", ScopeRead, serveOpenAPI) // openapi.go says why read
	s.route(get, "/admin/deliveries", ScopeRead, s.listDeliveries)
	// Before :id, which would otherwise take "stream" for an id: Fiber
	// matches routes in the order they are registered.
	s.route(get, "/admin/deliveries/stream", ScopeRead, s.streamDeliveries)
	s.route(get, "/admin/deliveries/:id", ScopeRead, s.getDelivery)
	s.route(post, "/admin/deliveries/:id/replay", ScopeOperate, s.mutation("replay_delivery", s.replayDelivery))
	s.route(get, "/admin/replays/:id", ScopeRead, getOne("replay", func(ctx context.Context, id int64) (Replay, error) {
		return readReplay(ctx, pool, id)
	}))
	s.route(post, "/admin/bulk-replays", ScopeOperate, requireJSON, s.mutation("bulk_replay", s.createBulkReplay))
	s.route(get, "/admin/bulk-replays/:id", ScopeRead, getOne("bulk replay", func(ctx context.Context, id int64) (jobs.BulkReplay, error) {
		return jobs.GetBulkReplay(ctx, pool, id)
	}))
	s.route(post, "/admin/replays", ScopeRead, bulkReplaysMoved) // a 404 naming the new route
	s.route(get, "/admin/destinations", ScopeRead, s.listDestinations)
	s.route(post, "/admin/destinations/:name/pause", ScopeOperate, s.mutation("destination_pause", s.setPaused(true)))
	s.route(post, "/admin/destinations/:name/resume", ScopeOperate, s.mutation("destination_resume", s.setPaused(false)))
	s.route(post, "/admin/destinations/:name/retry", ScopeOperate, requireJSON, s.mutation("destination_retry", s.retryDestination))
	s.route(post, "/admin/destinations/:name/abandon", ScopeOperate, s.mutation("destination_abandon", s.abandonDestination))
	s.route(post, "/admin/sources/:name/redeliver", ScopeOperate, s.mutation("github_redeliver", s.recover(s.cfg.Redeliver, "github")))
	s.route(post, "/admin/sources/:name/reconcile", ScopeOperate, s.mutation("stripe_reconcile", s.recover(s.cfg.Reconcile, "stripe")))
}

// mountTools adds what the config turns on: metrics (read), and pprof
// and River UI (admin: River UI cancels, retries and deletes any job, and
// a heap profile holds whatever the process held).
func (s *Server) mountTools() {
	if s.cfg.Metrics != nil {
		s.route(get, "/metrics", ScopeRead, s.netHTTP(s.cfg.Metrics))
	}
	if s.cfg.Pprof {
		s.route(get, "/debug/pprof/*", ScopeAdmin, s.netHTTP(http.HandlerFunc(servePprof)))
	}
	if s.cfg.RiverUI != nil {
		ui := s.netHTTP(s.cfg.RiverUI)
		s.route(all, "/riverui", ScopeAdmin, ui)
		s.route(all, "/riverui/*", ScopeAdmin, ui)
	}
}

// servePprof is net/http/pprof's handlers, on the admin listener only.
func servePprof(w http.ResponseWriter, r *http.Request) {
	switch name := strings.TrimPrefix(r.URL.Path, "/debug/pprof/"); name {
	case "profile":
		pprof.Profile(w, r)
	case "trace":
		pprof.Trace(w, r)
	case "symbol":
		pprof.Symbol(w, r)
	case "cmdline":
		pprof.Cmdline(w, r)
	case "":
		pprof.Index(w, r)
	default:
		pprof.Handler(name).ServeHTTP(w, r)
	}
}
