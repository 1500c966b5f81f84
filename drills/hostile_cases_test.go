package drills

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hookinbox/hookinbox/verify"
)

// hostileCase is one kind of hostile request and the answer the response
// table of docs/ingest.md documents for it.
type hostileCase struct {
	name  string
	build func() rawRequest
	want  int
	code  string
	// stores marks the cases that are hostile-looking but authentic
	// (validly signed), which hookinbox must store verbatim as data.
	stores bool
}

var hostileSeq atomic.Int64

// hostileID is a fresh delivery id, so repeated cases never collide.
func hostileID(prefix string) string { return fmt.Sprintf("%s-%d", prefix, hostileSeq.Add(1)) }

// signedWith signs body as provider with secret, at t, as delivery id / event.
func signedWith(provider, secret string, body []byte, id, event string, at time.Time) http.Header {
	s, err := verify.NewSigner(provider, secret)
	if err != nil {
		panic(err)
	}
	h, err := s.Sign(body, verify.Message{ID: id, EventType: event}, at)
	if err != nil {
		panic(err)
	}
	return h
}

func ghBody(n string) []byte { return []byte(`{"ref":"refs/heads/main","n":"` + n + `"}`) }

// github builds a GitHub request signed with the right secret, then edits
// its headers.
func github(body []byte, id, event string, edit func(h http.Header)) rawRequest {
	h := signedWith(verify.ProviderGitHub, githubSecret, body, id, event, time.Now())
	if edit != nil {
		edit(h)
	}
	return rawRequest{Path: "/webhooks/github", Header: signedHeader(h), Body: body}
}

func stripeBody(id string) []byte {
	return []byte(`{"id":"` + id + `","type":"payment_intent.succeeded","created":1,"data":{"object":{"id":"pi_hostile"}}}`)
}

func stripe(body []byte, at time.Time, secret string) rawRequest {
	h := signedWith(verify.ProviderStripe, secret, body, "", "", at)
	return rawRequest{Path: "/webhooks/stripe", Header: signedHeader(h), Body: body}
}

func standard(body []byte, id string, at time.Time, edit func(h http.Header)) rawRequest {
	h := signedWith(verify.ProviderStandard, billingSecret, body, id, "", at)
	if edit != nil {
		edit(h)
	}
	return rawRequest{Path: "/webhooks/billing", Header: signedHeader(h), Body: body}
}

const sqlish = `x'); DROP TABLE inbox; --`

// hostileCases is the table. maxBody is the drill's max_body_bytes.
func hostileCases(maxBody int) []hostileCase { return allHostileCases(maxBody) }

func allHostileCases(maxBody int) []hostileCase {
	long := strings.Repeat("d", 10<<10)
	return []hostileCase{
		// Signatures.
		{name: "github: no signature", want: 400, code: "missing_header", build: func() rawRequest {
			return github(ghBody("a"), hostileID("h"), "push", func(h http.Header) { h.Del("X-Hub-Signature-256") })
		}},
		{name: "github: SHA-1 signature only", want: 400, code: "missing_header", build: func() rawRequest {
			return github(ghBody("a"), hostileID("h"), "push", func(h http.Header) {
				h.Del("X-Hub-Signature-256")
				h.Set("X-Hub-Signature", "sha1="+strings.Repeat("ab", 20))
			})
		}},
		{name: "github: wrong signature", want: 401, code: "invalid_signature", build: func() rawRequest {
			return github(ghBody("a"), hostileID("h"), "push", func(h http.Header) {
				h.Set("X-Hub-Signature-256", "sha256="+strings.Repeat("0f", 32))
			})
		}},
		{name: "github: garbled signature", want: 401, code: "invalid_signature", build: func() rawRequest {
			return github(ghBody("a"), hostileID("h"), "push", func(h http.Header) { h.Set("X-Hub-Signature-256", "sha256=zz\x7f!") })
		}},
		{name: "github: signature of another body", want: 401, code: "invalid_signature", build: func() rawRequest {
			r := github(ghBody("signed"), hostileID("h"), "push", nil)
			r.Body = ghBody("sent!!")
			return r
		}},
		{name: "github: unknown secret", want: 401, code: "invalid_signature", build: func() rawRequest {
			body, id := ghBody("a"), hostileID("h")
			h := signedWith(verify.ProviderGitHub, "not-our-secret", body, id, "push", time.Now())
			return rawRequest{Path: "/webhooks/github", Header: signedHeader(h), Body: body}
		}},
		{name: "github: no delivery id", want: 400, code: "missing_header", build: func() rawRequest {
			return github(ghBody("a"), hostileID("h"), "push", func(h http.Header) { h.Del("X-GitHub-Delivery") })
		}},
		{name: "stripe: signed 10 min ago", want: 401, code: "timestamp_out_of_tolerance", build: func() rawRequest {
			return stripe(stripeBody(hostileID("evt")), time.Now().Add(-10*time.Minute), stripeSecret)
		}},
		{name: "stripe: signed 10 min ahead", want: 401, code: "timestamp_out_of_tolerance", build: func() rawRequest {
			return stripe(stripeBody(hostileID("evt")), time.Now().Add(10*time.Minute), stripeSecret)
		}},
		{name: "stripe: garbled signature", want: 401, code: "invalid_signature", build: func() rawRequest {
			r := stripe(stripeBody(hostileID("evt")), time.Now(), stripeSecret)
			r.Header = [][2]string{{"Stripe-Signature", "t=abc,v1=\x01zz,,=,"}, {"Content-Type", "application/json"}}
			return r
		}},
		{name: "stripe: unknown secret", want: 401, code: "invalid_signature", build: func() rawRequest {
			return stripe(stripeBody(hostileID("evt")), time.Now(), "whsec_not_ours")
		}},
		{name: "standard: signed 10 min ago", want: 401, code: "timestamp_out_of_tolerance", build: func() rawRequest {
			return standard([]byte(`{"type":"invoice.paid","data":{"id":"in_1"}}`), hostileID("msg"), time.Now().Add(-10*time.Minute), nil)
		}},
		{name: "standard: garbled signature", want: 401, code: "invalid_signature", build: func() rawRequest {
			return standard([]byte(`{"type":"invoice.paid"}`), hostileID("msg"), time.Now(), func(h http.Header) {
				h.Set("Webhook-Signature", "v1,!!!notbase64 v2,"+hex.EncodeToString([]byte("x")))
			})
		}},

		// Bodies and ids, validly signed: the extractors must refuse them.
		{name: "github: invalid JSON", want: 400, code: "invalid_payload", build: func() rawRequest {
			return github([]byte(`{"ref": "refs/heads/main",`), hostileID("h"), "push", nil)
		}},
		{name: "github: form-encoded", want: 400, code: "invalid_payload", build: func() rawRequest {
			return github([]byte(`payload=%7B%7D`), hostileID("h"), "push", nil)
		}},
		{name: "github: 10 KB delivery id", want: 400, code: "invalid_payload", build: func() rawRequest {
			return github(ghBody("a"), long, "push", nil)
		}},
		{name: "github: invalid UTF-8 delivery id", want: 400, code: "invalid_payload", build: func() rawRequest {
			return github(ghBody("a"), hostileID("h")+"\xff\xfe", "push", nil)
		}},
		{name: "github: NUL in delivery id", want: 400, code: "invalid_payload", build: func() rawRequest {
			return github(ghBody("a"), hostileID("h")+"\x00x", "push", nil)
		}},
		{name: "github: control character in event", want: 400, code: "invalid_payload", build: func() rawRequest {
			return github(ghBody("a"), hostileID("h"), "push\x01", nil)
		}},
		{name: "stripe: invalid JSON", want: 400, code: "invalid_payload", build: func() rawRequest {
			return stripe([]byte(`{"id":"evt_1","type":`), time.Now(), stripeSecret)
		}},
		{name: "stripe: no id", want: 400, code: "invalid_payload", build: func() rawRequest {
			return stripe([]byte(`{"type":"payment_intent.succeeded"}`), time.Now(), stripeSecret)
		}},
		{name: "stripe: 10 KB id", want: 400, code: "invalid_payload", build: func() rawRequest {
			return stripe(stripeBody(long), time.Now(), stripeSecret)
		}},
		{name: "stripe: NUL in id", want: 400, code: "invalid_payload", build: func() rawRequest {
			return stripe(stripeBody(hostileID("evt")+`\u0000`), time.Now(), stripeSecret)
		}},
		{name: "stripe: invalid UTF-8 in id", want: 400, code: "invalid_payload", build: func() rawRequest {
			return stripe(stripeBody(hostileID("evt")+"\xff"), time.Now(), stripeSecret)
		}},
		{name: "stripe: id is a number", want: 400, code: "invalid_payload", build: func() rawRequest {
			return stripe([]byte(`{"id":12,"type":"x"}`), time.Now(), stripeSecret)
		}},
		{name: "standard: 10 KB webhook-id", want: 400, code: "invalid_payload", build: func() rawRequest {
			return standard([]byte(`{"type":"invoice.paid"}`), long, time.Now(), nil)
		}},
		{name: "standard: invalid JSON", want: 400, code: "invalid_payload", build: func() rawRequest {
			return standard([]byte(`[1,2`), hostileID("msg"), time.Now(), nil)
		}},

		// SQL-ish ids and event types: unsigned they are refused; signed they
		// are authentic data, stored verbatim as text.
		{name: "github: SQL-ish id, unsigned", want: 400, code: "missing_header", build: func() rawRequest {
			return github(ghBody("a"), hostileID(sqlish), "push", func(h http.Header) { h.Del("X-Hub-Signature-256") })
		}},
		{name: "stripe: SQL-ish id, bad signature", want: 401, code: "invalid_signature", build: func() rawRequest {
			r := stripe(stripeBody(hostileID(sqlish)), time.Now(), stripeSecret)
			r.Body = append(r.Body, ' ')
			return r
		}},
		{name: "github: SQL-ish id and event, signed", want: 202, code: "accepted", stores: true, build: func() rawRequest {
			return github(ghBody("a"), hostileID(sqlish), `push'; DELETE FROM ledger; --`, nil)
		}},

		// Sizes.
		{name: "headers over 16 KiB", want: 431, code: "request_headers_too_large", build: func() rawRequest {
			return github(ghBody("a"), hostileID("h"), "push", func(h http.Header) { h.Set("X-Padding", strings.Repeat("p", 20<<10)) })
		}},
		{name: "body over max_body_bytes", want: 413, code: "payload_too_large", build: func() rawRequest {
			body := make([]byte, maxBody+1)
			return github(body, hostileID("h"), "push", nil)
		}},

		// Sources and paths.
		{name: "unknown source", want: 404, code: "unknown_source", build: func() rawRequest {
			r := github(ghBody("a"), hostileID("h"), "push", nil)
			r.Path = "/webhooks/gitlab"
			return r
		}},
		{name: "source with ../", want: 404, code: "not_found", build: func() rawRequest {
			r := github(ghBody("a"), hostileID("h"), "push", nil)
			r.Path = "/webhooks/../admin/deliveries"
			return r
		}},
		{name: "source with encoded ../", want: 404, code: "unknown_source", build: func() rawRequest {
			r := github(ghBody("a"), hostileID("h"), "push", nil)
			r.Path = "/webhooks/..%2f..%2fadmin%2fdeliveries"
			return r
		}},
		{name: "source with encoded slash", want: 404, code: "unknown_source", build: func() rawRequest {
			r := github(ghBody("a"), hostileID("h"), "push", nil)
			r.Path = "/webhooks/github%2fextra"
			return r
		}},
		{name: "source with encoded ../ to another source", want: 404, code: "unknown_source", build: func() rawRequest {
			r := github(ghBody("a"), hostileID("h"), "push", nil)
			r.Path = "/webhooks/github%2f..%2fstripe"
			return r
		}},
		{name: "source name of 10 KB", want: 404, code: "unknown_source", build: func() rawRequest {
			r := github(ghBody("a"), hostileID("h"), "push", nil)
			r.Path = "/webhooks/" + strings.Repeat("s", 10<<10)
			return r
		}},
	}
}
