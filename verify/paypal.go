package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// ProviderPayPal verifies through PayPal's verify-webhook-signature API:
// PayPal signs with a certificate, and its API checks the signature. The
// source needs no secret, but a paypal block (PayPalConfig).
const ProviderPayPal = "paypal"

// DefaultPayPalAPIBase is PayPal's live REST API.
const DefaultPayPalAPIBase = "https://api-m.paypal.com"

// PayPalConfig reaches PayPal's REST API. Field names are the keys of a
// source's paypal block in hookinbox.yaml.
type PayPalConfig struct {
	// APIBase is the REST API's base URL: https://api-m.sandbox.paypal.com
	// for the sandbox. Defaults to DefaultPayPalAPIBase.
	APIBase string `yaml:"api_base"`
	// ClientID and ClientSecret are the REST app's credentials, exchanged
	// for an access token (OAuth client credentials), cached until it
	// expires. Required; never in errors or logs.
	ClientID     string `yaml:"client_id"`
	ClientSecret string `yaml:"client_secret"`
	// WebhookID is the id PayPal gave the webhook (its dashboard lists
	// it): signatures are checked against it. Required.
	WebhookID string `yaml:"webhook_id"`
}

// PayPal's transmission headers, as its docs spell them.
var payPalHeaders = []string{"PAYPAL-AUTH-ALGO", "PAYPAL-CERT-URL", "PAYPAL-TRANSMISSION-ID", "PAYPAL-TRANSMISSION-SIG", "PAYPAL-TRANSMISSION-TIME"}

// payPalTokenMargin renews a token this long before PayPal says it expires.
const payPalTokenMargin = time.Minute

type payPalVerifier struct {
	cfg       PayPalConfig
	client    *http.Client
	tolerance time.Duration
	now       func() time.Time
	fields    *hmacVerifier // extracts the delivery

	mu      sync.Mutex
	token   string
	expires time.Time
}

func newPayPalVerifier(cfg Config) (Verifier, error) {
	p := cfg.PayPal
	switch {
	case p == nil:
		return nil, configErr("paypal", "required for provider paypal: api_base, client_id, client_secret, webhook_id")
	case p.ClientID == "":
		return nil, configErr("paypal.client_id", "required")
	case p.ClientSecret == "":
		return nil, configErr("paypal.client_secret", "required")
	case p.WebhookID == "":
		return nil, configErr("paypal.webhook_id", "required (the id PayPal shows for the webhook)")
	}
	pc := *p
	if pc.APIBase == "" {
		pc.APIBase = DefaultPayPalAPIBase
	}
	if u, err := url.Parse(pc.APIBase); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, configErr("paypal.api_base", "%q is not an absolute http(s) URL", pc.APIBase)
	}
	pc.APIBase = strings.TrimRight(pc.APIBase, "/")
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	return &payPalVerifier{cfg: pc, client: client, tolerance: cfg.Tolerance, now: cfg.Now,
		fields: &hmacVerifier{ids: []Field{{JSON: "id"}}, types: []Field{{JSON: "event_type"}}, occurred: []Field{{JSON: "create_time"}}}}, nil
}

func (v *payPalVerifier) Verify(body []byte, header http.Header) (Delivery, error) {
	return v.VerifyRequest(context.Background(), Request{Body: body, Header: header})
}

func (v *payPalVerifier) VerifyRequest(ctx context.Context, r Request) (Delivery, error) {
	vals, err := requiredHeaders(r.Header, payPalHeaders...)
	if err != nil {
		return Delivery{}, err
	}
	sent, err := time.Parse(time.RFC3339Nano, vals[4])
	if err != nil {
		return Delivery{}, fmt.Errorf("%w: PAYPAL-TRANSMISSION-TIME must be an RFC 3339 time", ErrInvalidSignature)
	}
	// Checked before the API call, not after as elsewhere: every check
	// costs a call to PayPal, and a stale or far-future request is refused
	// either way.
	if err := checkTolerance("PAYPAL-TRANSMISSION-TIME", sent.Unix(), v.now(), v.tolerance); err != nil {
		return Delivery{}, err
	}
	doc := &document{body: r.Body, header: r.Header}
	if _, err := doc.decode(); err != nil {
		return Delivery{}, err
	}
	if err := v.check(ctx, vals, r.Body); err != nil {
		return Delivery{}, err
	}
	return v.fields.extract(doc)
}

// check asks PayPal whether the transmission is genuine. An answer other
// than SUCCESS or FAILURE, or none, is ErrUnavailable: not the sender's
// fault, and PayPal retries.
func (v *payPalVerifier) check(ctx context.Context, vals []string, body []byte) error {
	req := payPalVerifyBody(vals, v.cfg.WebhookID, body)
	for attempt := 0; ; attempt++ {
		token, err := v.accessToken(ctx)
		if err != nil {
			return err
		}
		status, answer, err := v.post(ctx, "/v1/notifications/verify-webhook-signature", "application/json", "Bearer "+token, req)
		if err != nil {
			return err
		}
		if status == http.StatusUnauthorized && attempt == 0 {
			// The cached token was revoked or expired early: once more
			// with a new one.
			v.dropToken(token)
			continue
		}
		if status != http.StatusOK {
			return fmt.Errorf("%w: PayPal's verify-webhook-signature answered %d", ErrUnavailable, status)
		}
		var out struct {
			Status string `json:"verification_status"`
		}
		if json.Unmarshal(answer, &out) != nil {
			return fmt.Errorf("%w: PayPal's verify-webhook-signature answered something other than JSON", ErrUnavailable)
		}
		switch out.Status {
		case "SUCCESS":
			return nil
		case "FAILURE":
			return fmt.Errorf("%w: PayPal's verify-webhook-signature says the signature is not PayPal's for webhook %s",
				ErrInvalidSignature, v.cfg.WebhookID)
		}
		return fmt.Errorf("%w: PayPal's verify-webhook-signature answered verification_status %q", ErrUnavailable, out.Status)
	}
}

// payPalVerifyBody is the API's request. It is written by hand so that
// webhook_event holds the body byte for byte: PayPal's check covers a CRC32
// of the bytes it sent, and re-encoding the event would change them.
func payPalVerifyBody(vals []string, webhookID string, event []byte) []byte {
	var b bytes.Buffer
	b.WriteString("{")
	for i, k := range []string{"auth_algo", "cert_url", "transmission_id", "transmission_sig", "transmission_time", "webhook_id"} {
		v := webhookID
		if i < len(vals) {
			v = vals[i]
		}
		s, _ := json.Marshal(v) // strings always marshal
		fmt.Fprintf(&b, "%q:%s,", k, s)
	}
	b.WriteString(`"webhook_event":`)
	b.Write(trimJSONSpace(event))
	b.WriteString("}")
	return b.Bytes()
}

// accessToken returns the cached token, or a new one from PayPal's OAuth
// endpoint (client credentials).
func (v *payPalVerifier) accessToken(ctx context.Context) (string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.token != "" && v.now().Before(v.expires) {
		return v.token, nil
	}
	status, answer, err := v.post(ctx, "/v1/oauth2/token", "application/x-www-form-urlencoded", "",
		[]byte("grant_type=client_credentials"))
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		// 401 here is our credentials, not the sender's signature.
		return "", fmt.Errorf("%w: PayPal's OAuth token endpoint answered %d (check paypal.client_id and paypal.client_secret)", ErrUnavailable, status)
	}
	var out struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if json.Unmarshal(answer, &out) != nil || out.AccessToken == "" {
		return "", fmt.Errorf("%w: PayPal's OAuth token endpoint answered without an access_token", ErrUnavailable)
	}
	v.token = out.AccessToken
	v.expires = v.now().Add(time.Duration(out.ExpiresIn)*time.Second - payPalTokenMargin)
	return v.token, nil
}

func (v *payPalVerifier) dropToken(token string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.token == token {
		v.token = ""
	}
}

// post calls PayPal. Transport failures are ErrUnavailable and never
// carry the credentials (they travel in headers, which errors do not
// quote).
func (v *payPalVerifier) post(ctx context.Context, path, contentType, auth string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.cfg.APIBase+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	if auth == "" {
		req.SetBasicAuth(v.cfg.ClientID, v.cfg.ClientSecret)
	} else {
		req.Header.Set("Authorization", auth)
	}
	resp, err := v.client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the URL is ours; the cause is what matters
		}
		return 0, nil, fmt.Errorf("%w: PayPal's API at %s did not answer: %v", ErrUnavailable, v.cfg.APIBase, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, nil, fmt.Errorf("%w: reading PayPal's answer: %v", ErrUnavailable, err)
	}
	return resp.StatusCode, answer, nil
}
