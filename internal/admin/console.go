package admin

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
)

// The console: an inbox browser under /console/, rendered on the server
// from html/template, behind the admin token like every other route. Its
// pages read through the API's own queries, and each of its buttons runs
// the API's route (consoleAction), so a page adds no second path to the
// data. The little JavaScript it has (htmx, uPlot, console.js) is embedded;
// every page reads without it.

var (
	//go:embed console/*.html
	consoleHTML embed.FS
	//go:embed console/static/*.js console/static/*.css
	consoleStatic embed.FS

	consolePages = parseConsolePages("overview", "deliveries", "delivery", "conflicts", "conflict", "alerts", "bulk_new", "bulk", "error")
)

func parseConsolePages(names ...string) map[string]*template.Template {
	pages := map[string]*template.Template{}
	for _, name := range names {
		pages[name] = template.Must(template.New(name).Funcs(consoleFuncs).ParseFS(consoleHTML,
			"console/layout.html", "console/parts.html", "console/"+name+".html"))
	}
	return pages
}

var consoleFuncs = template.FuncMap{
	"when": func(t any) string {
		switch t := t.(type) {
		case time.Time:
			return t.UTC().Format("2006-01-02 15:04:05Z")
		case *time.Time:
			if t != nil {
				return t.UTC().Format("2006-01-02 15:04:05Z")
			}
		}
		return "—"
	},
	"ago": func(t any) string {
		switch t := t.(type) {
		case time.Time:
			return ago(time.Since(t))
		case *time.Time:
			if t != nil {
				return ago(time.Since(*t))
			}
		}
		return "—"
	},
	// clickKey is a fresh Idempotency-Key for one form: rendered once, so
	// the form posted twice is one operation.
	"clickKey": newClickKey,
	"str": func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	},
}

// ago is a duration for people: "42s", "5m", "3h", "2d".
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// pageBase is what the layout needs of every page.
type pageBase struct {
	Title   string
	Nav     string // the navigation entry to highlight
	CSRF    string // the session's CSRF token, for every form
	SignOut bool   // the page's reader came with browser credentials: a session to end
	Token   string // the reader's token's name and scope, beside Sign out
	// Operate: the reader's token may replay, retry, pause and resume, so
	// the page shows those buttons (the routes check the scope whatever a
	// page shows).
	Operate bool
	RiverUI bool // River UI is mounted and the reader's token has scope admin
}

func (s *Server) page(c *fiber.Ctx, title, nav string) pageBase {
	auth, p := authOf(c), principalOf(c)
	v := pageBase{Title: title, Nav: nav, CSRF: s.csrfToken(c), SignOut: auth == authCookie || auth == authBasic}
	if p != nil { // nil on an error page before authentication (a 401)
		v.Token = p.name + " (" + p.scope.String() + ")"
		v.Operate, v.RiverUI = p.scope >= ScopeOperate, s.cfg.RiverUI != nil && p.scope >= ScopeAdmin
	}
	return v
}

// mountConsole adds the console's routes. Its forms post to routes of its
// own, which run the API's (consoleAction).
func (s *Server) mountConsole() {
	s.route(get, "/console/", ScopeRead, s.consoleOverview)
	s.route(get, "/console/deliveries", ScopeRead, s.consoleDeliveries)
	s.route(get, "/console/deliveries/rows", ScopeRead, s.consoleDeliveryRows)
	s.route(get, "/console/deliveries/:id", ScopeRead, s.consoleDelivery)
	s.route(get, "/console/deliveries/:id/live", ScopeRead, s.consoleDeliveryLive)
	s.route(post, "/console/deliveries/:id/replay", ScopeOperate, s.consoleReplay())
	s.route(get, "/console/conflicts", ScopeRead, s.consoleConflicts)
	s.route(get, "/console/alerts", ScopeRead, s.consoleAlerts)
	s.route(get, "/console/conflicts/:id", ScopeRead, s.consoleConflict)
	s.route(get, "/console/bulk-replays/new", ScopeRead, s.consoleBulkNew)
	s.route(post, "/console/bulk-replays", ScopeOperate, s.consoleBulkStart())
	s.route(get, "/console/bulk-replays/:id", ScopeRead, s.consoleBulk)
	s.route(get, "/console/bulk-replays/:id/progress", ScopeRead, s.consoleBulkProgress)
	s.route(post, "/console/destinations/:name/:action", ScopeOperate, s.consoleDestination())
	s.route(all, "/console/*", ScopeRead, func(c *fiber.Ctx) error { return errNotFound("no console page at " + c.Path()) })
}

// render writes a page, or a fragment of one (name), with the console's
// headers.
func (s *Server) render(c *fiber.Ctx, status int, page, name string, v any) error {
	var out bytes.Buffer
	if err := consolePages[page].ExecuteTemplate(&out, name, v); err != nil {
		return err
	}
	consoleHeaders(c)
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.Status(status).Send(out.Bytes())
}

// consoleHeaders: no caching of pages that show live data and the CSRF
// token; scripts only from here; no framing, so that no other site can
// overlay a button.
func consoleHeaders(c *fiber.Ctx) {
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderReferrerPolicy, "same-origin")
	c.Set(fiber.HeaderContentSecurityPolicy, "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "+
		"img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
}

// consoleAsset serves an embedded file of console/static.
func consoleAsset(c *fiber.Ctx) error {
	name := path.Base(c.Params("file"))
	body, err := fs.ReadFile(consoleStatic, "console/static/"+name)
	if err != nil {
		return errNotFound("no console file " + name)
	}
	switch path.Ext(name) {
	case ".js":
		c.Set(fiber.HeaderContentType, "text/javascript; charset=utf-8")
	case ".css":
		c.Set(fiber.HeaderContentType, "text/css; charset=utf-8")
	}
	c.Set(fiber.HeaderCacheControl, "private, max-age=300")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	return c.Send(body)
}

type errorView struct {
	pageBase
	Status  int
	Code    string
	Message string
	SignIn  string // the sign-in URL, for a 401
}

// isConsolePage reports whether an error is to be rendered as a page: a
// request for the console that is not running one of the API's routes
// (consoleAction renders those answers itself).
func isConsolePage(c *fiber.Ctx) bool {
	return strings.HasPrefix(c.Path(), "/console") && c.Locals(apiLocal) == nil
}

func (s *Server) renderError(c *fiber.Ctx, status int, code, msg string) error {
	v := errorView{pageBase: s.page(c, http.StatusText(status), ""), Status: status, Code: code, Message: msg}
	if status == http.StatusUnauthorized {
		v.SignIn = "/login?next=" + url.QueryEscape(c.OriginalURL())
	}
	return s.render(c, status, "error", "layout", v)
}

// newClickKey is the Idempotency-Key of one click intent: rendered into a
// page's form, so that the form posted twice (a double click, a resent
// request) is one operation.
func newClickKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "console-" + hex.EncodeToString(b)
}
