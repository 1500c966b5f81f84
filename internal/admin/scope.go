package admin

import (
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"
)

// Scope is what a token may do on the admin listener. Scopes are ordered:
// each allows what the ones below it allow.
type Scope int

const (
	// ScopePublic is a route's scope when it needs no token: /healthz,
	// sign-in and sign-out, the console's static files. No token has it.
	ScopePublic Scope = iota
	// ScopeRead reads: deliveries and their payloads, replays, bulk
	// replays, destinations, the console's pages, metrics, readiness.
	ScopeRead
	// ScopeOperate is read, and acting on deliveries and destinations:
	// replay, bulk replay, retry, pause, resume, abandon, recovery.
	ScopeOperate
	// ScopeAdmin is everything, River UI and pprof included: admin.token's
	// scope.
	ScopeAdmin
)

// scopeNames are the scopes a token may have, as the config names them.
var scopeNames = map[Scope]string{ScopePublic: "public", ScopeRead: "read", ScopeOperate: "operate", ScopeAdmin: "admin"}

func (s Scope) String() string {
	if name, ok := scopeNames[s]; ok {
		return name
	}
	return fmt.Sprintf("Scope(%d)", int(s))
}

// parseScope reads a token's scope: read, operate or admin.
func parseScope(name string) (Scope, error) {
	for s := ScopeRead; s <= ScopeAdmin; s++ {
		if scopeNames[s] == name {
			return s, nil
		}
	}
	return 0, fmt.Errorf("scope %q: want read, operate or admin", name)
}

// requireScope refuses a caller whose token's scope is below need. It
// runs first in a route's chain, so a refused request claims no
// Idempotency-Key and changes nothing.
func requireScope(need Scope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p := principalOf(c)
		if p == nil {
			// A route behind a scope registered before authenticate: fail
			// closed (TestEveryRouteChecksItsScope names the route).
			return &apiError{http.StatusForbidden, CodeInsufficientScope,
				fmt.Sprintf("this route needs scope %s and the request was not authenticated", need)}
		}
		if p.scope < need {
			return &apiError{http.StatusForbidden, CodeInsufficientScope,
				fmt.Sprintf("this route needs scope %s; token %s has %s", need, p.name, p.scope)}
		}
		return c.Next()
	}
}

// routeScope is one route of the router and the scope it was declared
// with; declared is the method as declared (GET for HEAD too, ALL).
type routeScope struct {
	method, declared, path string
	scope                  Scope
}

// route registers handlers at method and path behind need. GET answers
// HEAD too, as Fiber's Get does, and "ALL" every method. Every route of
// the listener is registered here, so its scope stands beside it and the
// test that walks the router finds a route registered otherwise.
func (s *Server) route(method, path string, need Scope, handlers ...fiber.Handler) {
	methods := []string{method}
	switch method {
	case fiber.MethodGet:
		methods = []string{fiber.MethodHead, fiber.MethodGet}
	case "ALL":
		methods = fiber.DefaultMethods
	}
	if need != ScopePublic {
		handlers = append([]fiber.Handler{requireScope(need)}, handlers...)
	}
	for _, m := range methods {
		s.app.Add(m, path, handlers...)
		s.routes = append(s.routes, routeScope{method: m, declared: method, path: path, scope: need})
	}
}
