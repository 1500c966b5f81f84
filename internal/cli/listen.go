package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/verify"
)

const listenUsage = `usage: hookinbox listen --forward-to URL [--source NAME[=PROVIDER]]... [--events LIST] [--secret S] [--from now|ID|TIME]

Follows a running hookinbox's deliveries through its admin API and POSTs
each to --forward-to, as its provider would send it: the body byte for
byte, the provider's headers, and a signature made with a local secret
(--secret, else a development secret kept in your config directory, which
it prints), so your app runs its production verification code with that
secret. One line per delivery: when it was received, its inbox id, source,
event and delivery id, and your app's answer. A delivery your app fails is
printed as failed and not sent again. A listen started again continues
after the last delivery it handed on, for this admin API and these sources,
unless --from says otherwise.

`

// listenCmd is `hookinbox listen`.
func listenCmd(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("listen", e)
	fs.Usage = func() { fmt.Fprint(fs.Output(), listenUsage); fs.PrintDefaults() }
	adminFlags(fs, e)
	forwardTo := fs.String("forward-to", "", "URL of your app's webhook endpoint (required)")
	var named listFlag
	fs.Var(&named, "source", "a source to follow, NAME or NAME=PROVIDER (repeat, or comma-separate; default: every source of the config)")
	events := fs.String("events", "", `event types to forward, comma-separated, as routes name them: exact names, "*", prefixes such as "invoice.*" (default: all)`)
	secret := fs.String("secret", "", "sign with this secret instead of the development secret")
	from := fs.String("from", "", "where to start: now, an inbox id (that delivery and those after it) or an RFC 3339 time (default: after the last delivery handed on, else now)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *forwardTo == "" {
		return errors.New("--forward-to is required: the URL of your app's webhook endpoint")
	}
	if u, err := url.Parse(*forwardTo); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--forward-to %q: want an http:// or https:// URL", *forwardTo)
	}
	client, err := newAdminClient(fs, e)
	if err != nil {
		return err
	}
	cfg, err := loadOptionalConfig(fs, e)
	if err != nil {
		return err
	}
	l, err := newListen(e, client, cfg, *forwardTo, named, *secret, splitList(*events))
	if err != nil {
		return err
	}
	after, since, err := l.start(ctx, *from)
	if err != nil {
		return err
	}
	return l.follow(ctx, after, since)
}

// listenRun is one run of `hookinbox listen`.
type listenRun struct {
	e       env
	client  *adminClient
	fwd     *forwarder
	sources []listenSource
	query   url.Values // the stream's filters: source and event
	cursor  *listenCursor
	saved   bool // cursor was read from its file
}

func newListen(e env, client *adminClient, cfg config.Config, forwardTo string, named []string,
	secret string, events []string) (*listenRun, error) {
	sources, all, err := listenSources(cfg, named)
	if err != nil {
		return nil, err
	}
	dir, dirErr := userConfigDir(e)
	secretFrom := "--secret"
	if secret == "" {
		if dirErr != nil {
			return nil, dirErr
		}
		if secret, secretFrom, err = listenSecret(dir); err != nil {
			return nil, fmt.Errorf("the development secret: %w", err)
		}
	}
	fwd, sources, err := newForwarder(forwardTo, secret, sources, cfg, e.stdout, func(s listenSource, err error) error {
		if !all {
			return fmt.Errorf("%w\n(pass --secret in the form this provider's secrets take)", err)
		}
		// Not asked for by name: the config's other sources still are.
		fmt.Fprintf(e.stderr, "not following %s: %s\n", s.name, printable(err.Error()))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(sources) == 0 {
		return nil, errors.New("no source of the config can be signed for: name one with --source")
	}
	l := &listenRun{e: e, client: client, fwd: fwd, sources: sources, query: url.Values{}}
	names := make([]string, len(sources))
	for i, s := range sources {
		names[i] = s.name
		l.query.Add("source", s.name)
	}
	for _, ev := range events {
		l.query.Add("event", ev)
	}
	if dirErr == nil {
		if l.cursor, l.saved, err = openCursor(dir, client.base, names, events); err != nil {
			return nil, err
		}
	}
	l.printBanner(forwardTo, secret, secretFrom)
	return l, nil
}

// listenSources resolves the sources named, each with its provider: the
// config's, else the one named after "=", else the name itself when it
// names a provider. None named: every source of the config (all is then
// true).
func listenSources(cfg config.Config, named []string) (sources []listenSource, all bool, err error) {
	if len(named) == 0 {
		for _, src := range cfg.Sources {
			sources = append(sources, listenSource{src.Name, src.Provider})
		}
		if len(sources) == 0 {
			return nil, true, errors.New("name the sources to follow: --source NAME (the config names none)")
		}
		return sources, true, nil
	}
	for _, n := range named {
		name, provider, _ := strings.Cut(n, "=")
		if src, ok := cfg.Source(name); ok && provider == "" {
			provider = src.Provider
		}
		if provider == "" && slices.Contains(verify.Providers(), name) {
			provider = name
		}
		if provider == "" {
			return nil, false, fmt.Errorf("source %q: no such source in the config, so its provider is unknown: --source %s=PROVIDER (one of %s)",
				name, name, strings.Join(verify.Providers(), ", "))
		}
		sources = append(sources, listenSource{name, provider})
	}
	return sources, false, nil
}

func (l *listenRun) printBanner(forwardTo, secret, secretFrom string) {
	var names []string
	for _, s := range l.sources {
		names = append(names, fmt.Sprintf("%s (%s)", s.name, s.provider))
	}
	fmt.Fprintf(l.e.stdout, "forwarding %s to %s\n", printable(strings.Join(names, ", ")), printable(forwardTo))
	fmt.Fprintf(l.e.stdout, "signing secret %s (from %s): your app verifies with it in place of the provider's\n",
		printable(secret), printable(secretFrom))
}

// start resolves where to begin: the cursor after which to follow, or a
// time to start at (since).
func (l *listenRun) start(ctx context.Context, from string) (after int64, since string, err error) {
	switch {
	case from == "" && l.saved:
		// A probe: a cursor past every id of the inbox is from a database
		// since reset, and nothing it holds was handed on yet.
		q := url.Values{"after": {strconv.FormatInt(l.cursor.After, 10)}, "wait": {"0s"}, "limit": {"1"}}
		_, err := l.next(ctx, q)
		if err == nil {
			fmt.Fprintf(l.e.stdout, "continuing after delivery %d (cursor in %s)\n", l.cursor.After, l.cursor.path)
			return l.cursor.After, "", nil
		}
		if !errors.Is(err, errCursorAhead) {
			return 0, "", err
		}
		fmt.Fprintf(l.e.stdout, "the saved cursor (after delivery %d) is past every delivery this inbox has stored: "+
			"a database since reset? ", l.cursor.After)
		fallthrough
	case from == "" || from == "now":
		page, err := l.next(ctx, url.Values{})
		if err != nil {
			return 0, "", err
		}
		fmt.Fprintln(l.e.stdout, "starting now")
		return page.After, "", l.save(page.After)
	}
	if id, err := strconv.ParseInt(from, 10, 64); err == nil && id > 0 {
		fmt.Fprintf(l.e.stdout, "starting at delivery %d\n", id)
		return id - 1, "", nil
	}
	if _, err := time.Parse(time.RFC3339, from); err == nil {
		fmt.Fprintf(l.e.stdout, "starting at the first delivery received at or after %s\n", from)
		return 0, from, nil
	}
	return 0, "", fmt.Errorf("--from %q: want now, an inbox id or an RFC 3339 time such as 2026-11-30T09:00:00Z", from)
}

// follow forwards pages until ctx ends. A page's deliveries are handed on
// in order, and the cursor is saved after each is, never before: a listen
// killed in the middle of one sends it again when started again. An admin
// API out of reach is asked again, a pause apart, from the same cursor.
func (l *listenRun) follow(ctx context.Context, after int64, since string) error {
	fmt.Fprintln(l.e.stdout, "ready: Ctrl-C to stop")
	pause := time.Second
	for ctx.Err() == nil {
		q := url.Values{"wait": {admin.MaxStreamWait.String()}}
		if since != "" {
			q.Set("since", since)
		} else {
			q.Set("after", strconv.FormatInt(after, 10))
		}
		page, err := l.next(ctx, q)
		if err != nil {
			if errors.Is(err, errListenFatal) || ctx.Err() != nil {
				return ignoreCanceled(ctx, err)
			}
			fmt.Fprintf(l.e.stderr, "hookinbox listen: %s; asking again in %s\n", printableText(err.Error()), pause)
			sleepCtx(ctx, pause)
			pause = min(2*pause, 30*time.Second)
			continue
		}
		pause, since = time.Second, ""
		for _, it := range page.Items {
			res := l.fwd.forward(ctx, it)
			if ctx.Err() != nil {
				return nil // stopped while the app had it: not saved, so sent again next time
			}
			l.fwd.printResult(it, res)
			if err := l.save(it.ID); err != nil {
				return err
			}
		}
		if page.After != after {
			if err := l.save(page.After); err != nil {
				return err
			}
		}
		after = page.After
	}
	return nil
}

var (
	// errListenFatal marks an answer asking again cannot change: a wrong
	// token, a cursor from another database, a server without the
	// stream.
	errListenFatal = errors.New("listen cannot go on")
	// errCursorAhead is the answer to a cursor past every id the inbox
	// handed out.
	errCursorAhead = errors.New(admin.CodeCursorAhead)
)

// next asks for one stream page with the listen's filters and q.
func (l *listenRun) next(ctx context.Context, q url.Values) (admin.StreamPage, error) {
	for k, v := range l.query {
		q[k] = v
	}
	var page admin.StreamPage
	status, raw, err := l.client.call(ctx, http.MethodGet, "/admin/deliveries/stream?"+q.Encode(), nil, "")
	switch {
	case status == http.StatusNotFound:
		return page, fmt.Errorf("%w: %v\n(is that hookinbox older than listen? it has no /admin/deliveries/stream)", errListenFatal, err)
	case status >= 400 && status < 500:
		var answer struct {
			Error struct{ Code string } `json:"error"`
		}
		if json.Unmarshal(raw, &answer) == nil && answer.Error.Code == admin.CodeCursorAhead {
			err = fmt.Errorf("%w: %w", errCursorAhead, err)
		}
		return page, fmt.Errorf("%w: %w", errListenFatal, err)
	case err != nil:
		return page, err
	}
	return page, json.Unmarshal(raw, &page)
}

// save records the cursor, when there is a config directory to keep it.
func (l *listenRun) save(after int64) error {
	if l.cursor == nil {
		return nil
	}
	return l.cursor.save(after)
}

func ignoreCanceled(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// listFlag collects a flag given more than once, or comma-separated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, splitList(v)...)
	return nil
}

var _ flag.Value = (*listFlag)(nil)

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
