package redeliver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
)

// perPage is the largest page GitHub serves for hook deliveries.
const perPage = 100

// hook is the one webhook a pass looks at: a repository's or an
// organisation's. go-github has a method pair for each; hook hides which.
type hook struct {
	client      *github.Client
	owner, repo string // repository hook
	org         string // organisation hook
	appID       int64  // a GitHub App's own hook
	id          int64
	token       string // only to redact it from errors
}

// newHook builds the go-github client for cfg, which has been through
// WithDefaults and Validate.
func newHook(cfg Config) (*hook, error) {
	base, err := url.Parse(cfg.APIURL)
	if err != nil {
		return nil, configErr("github.api_url", fmt.Sprintf("github.api_url: %v", err))
	}
	// go-github resolves paths against BaseURL and refuses one without a
	// trailing slash. WithEnterpriseURLs is not used: it appends "api/v3/"
	// to any host that does not start with "api.", which would rewrite a
	// proxy's or a test server's URL behind the operator's back.
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	var client *github.Client
	if cfg.AppID != 0 {
		key, err := loadAppKey(cfg.PrivateKey)
		if err != nil {
			return nil, err
		}
		httpClient := *cfg.HTTPClient
		base := httpClient.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		httpClient.Transport = &appTransport{base: base, appID: cfg.AppID, key: key, now: time.Now}
		client = github.NewClient(&httpClient)
	} else {
		client = github.NewClient(cfg.HTTPClient).WithAuthToken(cfg.Token)
	}
	client.BaseURL = base

	h := &hook{client: client, org: cfg.Org, appID: cfg.AppID, id: cfg.HookID, token: cfg.Token}
	if cfg.Repo != "" {
		h.owner, h.repo, _ = strings.Cut(cfg.Repo, "/")
	}
	return h, nil
}

func (h *hook) String() string {
	if h.appID != 0 {
		return fmt.Sprintf("GitHub App %d's hook", h.appID)
	}
	if h.org != "" {
		return fmt.Sprintf("organisation %q hook %d", h.org, h.id)
	}
	return fmt.Sprintf("repository %q hook %d", h.owner+"/"+h.repo, h.id)
}

// page lists one page of deliveries, newest first, and returns the cursor
// of the next page ("" on the last). go-github v60 reads the cursor from the
// Link header's rel="next" URL into Response.Cursor.
func (h *hook) page(ctx context.Context, cursor string) ([]*github.HookDelivery, string, error) {
	opts := &github.ListCursorOptions{PerPage: perPage, Cursor: cursor}
	var (
		deliveries []*github.HookDelivery
		resp       *github.Response
		err        error
	)
	switch {
	case h.appID != 0:
		deliveries, resp, err = h.client.Apps.ListHookDeliveries(ctx, opts)
	case h.org != "":
		deliveries, resp, err = h.client.Organizations.ListHookDeliveries(ctx, h.org, h.id, opts)
	default:
		deliveries, resp, err = h.client.Repositories.ListHookDeliveries(ctx, h.owner, h.repo, h.id, opts)
	}
	if err != nil {
		lerr := &ListError{Hook: h.String(), Err: redact(err, h.token)}
		if resp != nil && resp.Response != nil {
			lerr.StatusCode = resp.StatusCode
		}
		return nil, "", lerr
	}
	return deliveries, resp.Cursor, nil
}

// redeliver asks GitHub to deliver attempt deliveryID again. GitHub
// answers 202 Accepted, which go-github reports as *github.AcceptedError:
// that is the success case, not an error.
func (h *hook) redeliver(ctx context.Context, deliveryID int64) error {
	var err error
	switch {
	case h.appID != 0:
		_, _, err = h.client.Apps.RedeliverHookDelivery(ctx, deliveryID)
	case h.org != "":
		_, _, err = h.client.Organizations.RedeliverHookDelivery(ctx, h.org, h.id, deliveryID)
	default:
		_, _, err = h.client.Repositories.RedeliverHookDelivery(ctx, h.owner, h.repo, h.id, deliveryID)
	}
	var accepted *github.AcceptedError
	if err == nil || errors.As(err, &accepted) {
		return nil
	}
	return redact(err, h.token)
}

// listSince lists the hook's delivery attempts made at or after since.
// GitHub lists newest first, so paging stops at the first page that
// reaches past since.
func (h *hook) listSince(ctx context.Context, since time.Time) ([]*github.HookDelivery, error) {
	var attempts []*github.HookDelivery
	cursor := ""
	for {
		page, next, err := h.page(ctx, cursor)
		if err != nil {
			return nil, err
		}
		reachedSince := false
		for _, d := range page {
			if d.GetDeliveredAt().Before(since) {
				reachedSince = true
				continue
			}
			attempts = append(attempts, d)
		}
		if reachedSince || next == "" {
			return attempts, nil
		}
		// A server handing back the cursor it was given would otherwise
		// keep this loop calling GitHub until the context ends.
		if next == cursor {
			return nil, &ListError{Hook: h.String(), Err: fmt.Errorf("the next-page cursor %q repeats", next)}
		}
		cursor = next
	}
}
