package admin

// RouteScope is one route, with the scope it was declared with (or, for
// the router's own list, none: Scope -1).
type RouteScope struct {
	Method, Declared, Path string // Declared: as Server.route was given it (GET, POST, ALL)
	Scope                  Scope
}

// DeclaredRoutes are the routes registered through Server.route, with
// their scopes.
func (s *Server) DeclaredRoutes() []RouteScope {
	out := make([]RouteScope, 0, len(s.routes))
	for _, r := range s.routes {
		out = append(out, RouteScope{Method: r.method, Declared: r.declared, Path: r.path, Scope: r.scope})
	}
	return out
}

// RouterRoutes are the routes Fiber's router holds, middleware (Use)
// left out: what a request can reach, however it was registered.
func (s *Server) RouterRoutes() []RouteScope {
	var out []RouteScope
	for _, r := range s.app.GetRoutes(true) {
		out = append(out, RouteScope{Method: r.Method, Path: r.Path, Scope: -1})
	}
	return out
}
