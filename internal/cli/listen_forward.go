package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/outbound"
	"github.com/hookinbox/hookinbox/verify"
)

// forwarder hands deliveries on to the developer's app, each signed as
// its provider signs, with the local secret rather than the production
// one: the app runs the verification code it runs in production, given
// the local secret.
type forwarder struct {
	url     string
	signers map[string]verify.Signer // by source name
	client  *http.Client
	out     io.Writer
	// retryPause is the pause before a refused connection is tried again.
	retryPause time.Duration
}

// listenSource is a source listen follows, and the provider it signs as.
type listenSource struct{ name, provider string }

// newForwarder makes a signer per source: the provider's, and for an hmac
// source its scheme from the config, keyed with secret. A source whose
// signature covers the URL it is sent to is signed for forwardTo. A
// source it cannot sign for goes to refused: the source is left out when
// refused returns nil, and newForwarder fails with its error otherwise.
func newForwarder(forwardTo, secret string, sources []listenSource, cfg config.Config, out io.Writer,
	refused func(listenSource, error) error) (*forwarder, []listenSource, error) {
	f := &forwarder{url: forwardTo, signers: map[string]verify.Signer{}, out: out, retryPause: time.Second,
		// A redirect is an answer: following it would carry the signature
		// to whatever host the Location names.
		client: &http.Client{Timeout: 30 * time.Second, CheckRedirect: outbound.CheckRedirect}}
	var kept []listenSource
	for _, s := range sources {
		vc := verify.Config{Provider: s.provider, Secrets: []string{secret}, NotificationURL: forwardTo}
		if src, ok := cfg.Source(s.name); ok && src.Provider == s.provider {
			vc.HMAC = src.HMAC
		}
		signer, err := verify.NewConfigSigner(vc)
		if err != nil {
			if err := refused(s, fmt.Errorf("source %s (%s): %w", s.name, s.provider, err)); err != nil {
				return nil, nil, err
			}
			continue
		}
		f.signers[s.name] = signer
		kept = append(kept, s)
	}
	return f, kept, nil
}

// forwardResult is the app's answer to one delivery.
type forwardResult struct {
	status string // the HTTP status, "" when none came
	code   int
	err    error
	took   time.Duration
}

// forward POSTs one delivery to the app. A connection the app refused is
// tried again twice, a pause apart (an app restarting under a file
// watcher): nothing reached it, so nothing can run twice. Any other
// failure, and any answer, is the result: the delivery is not sent again.
func (f *forwarder) forward(ctx context.Context, it admin.StreamItem) forwardResult {
	body, err := it.Body()
	if err != nil {
		return forwardResult{err: err}
	}
	signer, ok := f.signers[it.Source]
	if !ok {
		return forwardResult{err: fmt.Errorf("no signer for source %q", it.Source)}
	}
	var res forwardResult
	for try := 1; ; try++ {
		res = f.post(ctx, it, body, signer)
		if try == 3 || !errors.Is(res.err, syscall.ECONNREFUSED) || ctx.Err() != nil {
			return res
		}
		select {
		case <-ctx.Done():
			return res
		case <-time.After(f.retryPause):
		}
	}
}

// post signs at the time it sends, so that a delivery from history is as
// fresh as the app's tolerance wants.
func (f *forwarder) post(ctx context.Context, it admin.StreamItem, body []byte, signer verify.Signer) forwardResult {
	signed, err := signer.Sign(body, verify.Message{ID: it.DeliveryID, EventType: it.EventType}, time.Now())
	if err != nil {
		return forwardResult{err: fmt.Errorf("sign: %w", err)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(body))
	if err != nil {
		return forwardResult{err: err}
	}
	req.Header = forwardHeaders(it, signed)
	start := time.Now()
	resp, err := f.client.Do(req)
	res := forwardResult{took: time.Since(start), err: err}
	if err != nil {
		return res
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	res.status, res.code, res.took = resp.Status, resp.StatusCode, time.Since(start)
	return res
}

// transportHeaders are set by the request that carries the body, not
// copied from the stored one.
var transportHeaders = []string{"Host", "Content-Length", "Connection", "Keep-Alive", "Transfer-Encoding", "Te",
	"Trailer", "Upgrade", "Proxy-Connection", "Accept-Encoding", "Expect"}

// forwardHeaders is what the app gets: the headers as stored (the
// provider's event type and delivery id among them), less what the
// request's transport sets and every header that carries a signature or
// an HMAC, which the provider made with the production secret; then the
// signer's, the local secret's signature; then hookinbox's ids, named as
// its destinations name them. The stored Content-Type and User-Agent stay:
// they are the original request's, and the body is its body.
func forwardHeaders(it admin.StreamItem, signed http.Header) http.Header {
	h := http.Header{}
	for k, v := range it.Headers {
		k = http.CanonicalHeaderKey(k)
		lower := strings.ToLower(k)
		if slices.Contains(transportHeaders, k) || strings.Contains(lower, "signature") || strings.Contains(lower, "hmac") {
			continue
		}
		h[k] = slices.Clone(v)
	}
	for k, v := range signed {
		if (k == "Content-Type" || k == "User-Agent") && h.Get(k) != "" {
			continue
		}
		h[k] = v
	}
	h.Set("Hookinbox-Inbox-Id", strconv.FormatInt(it.ID, 10))
	h.Set("Hookinbox-Source", it.Source)
	h.Set("Hookinbox-Event", it.EventType)
	h.Set("Hookinbox-Delivery-Id", it.DeliveryID)
	return h
}

// printResult writes one line per delivery: when hookinbox received it,
// its inbox id, source, event type and delivery id, then the app's answer
// and how long it took. Everything from outside is escaped (printable).
func (f *forwarder) printResult(it admin.StreamItem, res forwardResult) {
	answer := printable(res.status)
	switch {
	case res.err != nil:
		answer = "failed: " + printable(res.err.Error()) + " (not sent again)"
	case res.code >= 300:
		answer += " (not sent again)"
	}
	fmt.Fprintf(f.out, "%s  #%d  %s  %s  %s  -> %s  %d ms\n", localTime(&it.ReceivedAt), it.ID,
		printable(it.Source), printable(it.EventType), printable(it.DeliveryID), answer, res.took.Milliseconds())
}
