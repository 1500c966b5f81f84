// Package admin serves the operators' API on its own listener: browse and
// replay deliveries, recover what providers failed to deliver, the River UI
// and Prometheus metrics. Every route declares the scope a token needs
// (scope.go), and every mutating route follows the Idempotency-Key
// contract (idempotency.go). Browsers authenticate with Basic or a session
// cookie (session.go, login.go), and their state-changing requests must
// come from our own origin (crosssite.go).
package admin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/httpedge"
)

// Recovery recovers one source's missed deliveries since a time and
// returns the JSON-able result.
type Recovery func(ctx context.Context, since time.Time) (any, error)

// Config configures the admin server: the admin block of hookinbox.yaml,
// whose defaults and checks are internal/config's, and what the server
// serves with.
type Config struct {
	// Admin is the admin block (internal/config documents each key and
	// fills its defaults): Token and Tokens, Listen (the address the
	// server is bound to; required), IdempotencyTTL, Pprof, Hosts (hosts.go
	// says why the others get 421), the connection limits and SignIn. With
	// no token at all, NewServer accepts only a loopback Listen, which is
	// then served without authentication.
	config.Admin

	Pool  *pgxpool.Pool         // Required.
	River *river.Client[pgx.Tx] // Required: replays are enqueued with it.

	// IdempotencyLock is how long a request holds its key before another
	// request with the key may take it over (the holder is presumed dead).
	// Defaults to 2m.
	IdempotencyLock time.Duration

	// Metrics serves GET /metrics. Nil: not served.
	Metrics http.Handler

	// RiverUI serves the River UI under /riverui/. Nil: not served.
	RiverUI http.Handler

	// Redeliver and Reconcile hold, per source name, the GitHub redelivery
	// and the Stripe reconciliation of sources configured for them.
	Redeliver map[string]Recovery
	Reconcile map[string]Recovery

	// Destinations answers about destinations and acts on them. Nil: none
	// configured.
	Destinations *destination.Service

	// Sources lists every configured source name, to tell an unknown source
	// (404) from one not configured for recovery (409).
	Sources []string

	// SessionTTL is how long a browser's session cookie (a sign-in at
	// /login, or a page loaded with Basic) lasts. Defaults to 12h.
	SessionTTL time.Duration

	// SignInAddresses bounds the addresses the sign-in limit tracks at
	// once; beyond it, the addresses left out share one limit (signin.go
	// says why). Defaults to DefaultSignInAddresses.
	SignInAddresses int

	// Logger defaults to a discard logger.
	Logger *slog.Logger
}

// The methods routes are declared with (Server.route).
const (
	get  = fiber.MethodGet
	post = fiber.MethodPost
	all  = "ALL"
)

// maxBodyBytes bounds an admin request's body: the largest is a bulk
// replay's filter, a few hundred bytes.
const maxBodyBytes = 1 << 20

func (c Config) WithDefaults() Config {
	c.Admin = c.Admin.WithDefaults()
	if c.IdempotencyLock == 0 {
		c.IdempotencyLock = 2 * time.Minute
	}
	if c.SessionTTL == 0 {
		c.SessionTTL = 12 * time.Hour
	}
	if c.SignInAddresses == 0 {
		c.SignInAddresses = DefaultSignInAddresses
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// ErrNoTokenOffLoopback refuses an admin API that anyone on the network
// could use: no admin.token and no admin.tokens.
var ErrNoTokenOffLoopback = errors.New("admin.token is empty: the admin listener may then only bind to loopback (e.g. 127.0.0.1:8081); set admin.token (HOOKINBOX_ADMIN_TOKEN) to listen elsewhere")

func (c Config) validate() error {
	if c.Pool == nil || c.River == nil {
		return errors.New("admin: Pool and River are required")
	}
	if c.Token == "" && len(c.Tokens) == 0 && !isLoopback(c.Listen) {
		return ErrNoTokenOffLoopback
	}
	if c.SignIn.Burst < 1 || c.SignIn.Every <= 0 || c.SignInAddresses < 1 {
		return errors.New("admin: SignIn.Burst, SignIn.Every and SignInAddresses must be positive")
	}
	for i, h := range c.Hosts {
		if err := checkHostName(h); err != nil {
			return fmt.Errorf("admin.hosts[%d]: %q %w", i, h, err)
		}
	}
	return nil
}

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Server is the admin HTTP server.
type Server struct {
	cfg    Config
	logger *slog.Logger
	app    *fiber.App
	// base is the context of net/http handlers' requests (netHTTP),
	// cancelled when Shutdown starts.
	base       context.Context
	cancelBase context.CancelFunc
	principals []principal // the configured tokens (tokens.go)
	// anonymous is everyone's principal when no token is configured
	// (loopback only); nil otherwise.
	anonymous *principal
	// unknownKey checks a session naming no configured token, so that it
	// takes as long as one naming a token (session.go).
	unknownKey []byte
	hosts      hostAllow
	signIns    *signInLimit
	routes     []routeScope  // every route, as registered (scope.go)
	streams    chan struct{} // a slot per stream request served (stream.go)
}

func NewServer(cfg Config) (*Server, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ps, err := cfg.principals()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, logger: cfg.Logger, principals: ps, unknownKey: randomKey(),
		hosts: newHostAllow(cfg.Listen, cfg.Hosts), signIns: newSignInLimit(cfg), streams: make(chan struct{}, maxStreams)}
	if len(ps) == 0 {
		s.anonymous = anonymous()
	}
	s.base, s.cancelBase = context.WithCancel(context.Background())
	s.app = fiber.New(fiber.Config{
		AppName:               "hookinbox-admin",
		DisableStartupMessage: true,
		BodyLimit:             maxBodyBytes,
		// Bodies are read as they arrive, after the Host check
		// (httpedge.LimitBody), never reserved from their Content-Length.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		ReadTimeout:                  30 * time.Second,
		IdleTimeout:                  120 * time.Second,
		ErrorHandler:                 s.errorHandler,
	})
	httpedge.Guard(s.app, maxBodyBytes)

	s.app.Use(forbidFraming)
	// /healthz says nothing a probe by service name should be refused.
	s.route(get, "/healthz", ScopePublic, func(c *fiber.Ctx) error { return c.JSON(fiber.Map{"status": "ok"}) })
	s.app.Use(s.refuseForeignHost)
	s.app.Use(httpedge.LimitBody(maxBodyBytes))
	s.route(get, "/", ScopePublic, func(c *fiber.Ctx) error { return c.Redirect("/console/", http.StatusSeeOther) })
	s.route(get, "/login", ScopePublic, s.loginPage)
	s.route(post, "/login", ScopePublic, s.login)
	s.route(post, "/logout", ScopePublic, s.logout)
	// The console's scripts and stylesheet are the same for everyone and
	// hold nothing secret; /login wears the stylesheet before anyone signs
	// in, and an unauthenticated fetch must not count as a failed sign-in.
	s.route(get, "/console/static/:file", ScopePublic, consoleAsset)
	s.app.Use(s.authenticate)
	s.app.Use(s.audit)
	s.app.Use(s.refuseCrossSite)
	s.mountAPI()
	s.mountConsole()
	s.mountTools()
	return s, nil
}

// netHTTP serves a net/http handler with a request context of the
// server's own, not the fasthttp RequestCtx the adaptor makes the parent:
// with fasthttp 1.51 (Fiber v2's), RequestCtx.Done reads a field that
// Server.Shutdown writes, and a handler that derives a context from its
// request's (River UI's API does, for its timeouts) has context read it
// from another goroutine, a data race at every shutdown (go test -race
// ./cmd/hookinbox). The server's context is cancelled when Shutdown
// starts, as RequestCtx's was, so a long pprof profile still ends there.
func (s *Server) netHTTP(h http.Handler) fiber.Handler {
	return adaptor.HTTPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(s.base))
	}))
}

// Serve answers on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	return s.app.Listener(httpedge.Limit(ln, httpedge.Conns{
		Max: s.cfg.MaxConnections, PerAddress: s.cfg.MaxConnectionsPerAddress}))
}

// Shutdown stops accepting and waits, bounded by ctx, for requests. It
// first cancels the net/http handlers' requests (River UI, pprof, metrics).
func (s *Server) Shutdown(ctx context.Context) error {
	s.cancelBase()
	return s.app.ShutdownWithContext(ctx)
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// forbidFraming keeps every answer of the listener (pages, the API, River
// UI, errors and refusals) out of other sites' frames, where a page could
// overlay a signed-in operator's clicks (clickjacking). Set before the
// handler runs, so an error's answer carries it too; a page that sets its
// own policy (the console's) names frame-ancestors itself.
func forbidFraming(c *fiber.Ctx) error {
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set(fiber.HeaderContentSecurityPolicy, "frame-ancestors 'none'")
	return c.Next()
}
