package verify

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakePayPal speaks the shapes of PayPal's OAuth token endpoint and its
// verify-webhook-signature API
// (https://developer.paypal.com/docs/api/webhooks/v1/#verify-webhook-signature_post,
// https://developer.paypal.com/api/rest/authentication/). PayPal signs
// "<transmission_id>|<transmission_time>|<webhook_id>|<crc32 of the body>"
// with its certificate's key; the fake signs the same string with an HMAC
// key standing in for the certificate, and checks it as PayPal's API
// does: against the webhook id it is asked about and the event's exact
// bytes.
type fakePayPal struct {
	srv                         *httptest.Server
	clientID, secret, webhookID string
	key                         []byte

	mu           sync.Mutex
	tokenCalls   int
	verifyCalls  int
	live         map[string]bool // issued, unrevoked tokens
	verifyStatus int             // answered instead of checking; 0: check
	tokenStatus  int             // answered by the token endpoint; 0: a token
	expiresIn    int64
}

const (
	payPalClientID  = "AYSq3RDGsmBLJE-otTkBtM-jBRd1TCQwFf9RGfwddNXWz0uFU9ztymylOhRS"
	payPalSecret    = "EGnHDxD_qRPdaLdZz8iCr8N7_MzF-YHPTkjs6NKYQvQSBngp4PTTVWkPZRbL"
	payPalWebhookID = "4JH86294D6297924G"
	// payPalEvent is the event of PayPal's webhook docs' example.
	payPalEvent = `{"id":"WH-2WR32451HC0233532-67976317FL4543714","event_version":"1.0","create_time":"2024-03-01T11:59:00Z","resource_type":"capture","event_type":"PAYMENT.CAPTURE.COMPLETED","summary":"Payment completed for $ 7.47 USD","resource":{"id":"42311647XV020574X","status":"COMPLETED"}}`
)

func newFakePayPal(t *testing.T) *fakePayPal {
	t.Helper()
	f := &fakePayPal{clientID: payPalClientID, secret: payPalSecret, webhookID: payPalWebhookID, key: []byte("paypal-cert-stand-in"),
		live: map[string]bool{}, expiresIn: 32400}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/oauth2/token", f.token)
	mux.HandleFunc("POST /v1/notifications/verify-webhook-signature", f.verify)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakePayPal) token(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokenCalls++
	id, secret, ok := r.BasicAuth()
	if f.tokenStatus != 0 {
		w.WriteHeader(f.tokenStatus)
		return
	}
	if !ok || id != f.clientID || secret != f.secret || r.FormValue("grant_type") != "client_credentials" {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"invalid_client","error_description":"Client Authentication failed"}`))
		return
	}
	token := fmt.Sprintf("A21AAFake%d", f.tokenCalls)
	f.live[token] = true
	_ = json.NewEncoder(w).Encode(map[string]any{"scope": "https://uri.paypal.com/services/webhooks", "access_token": token,
		"token_type": "Bearer", "app_id": "APP-80W284485P519543T", "expires_in": f.expiresIn, "nonce": "2024-03-01T11:59:00Z"})
}

func (f *fakePayPal) verify(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.verifyCalls++
	if f.verifyStatus != 0 {
		w.WriteHeader(f.verifyStatus)
		return
	}
	if !f.live[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")] {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"invalid_token","error_description":"Token signature verification failed"}`))
		return
	}
	var req struct {
		AuthAlgo         string          `json:"auth_algo"`
		CertURL          string          `json:"cert_url"`
		TransmissionID   string          `json:"transmission_id"`
		TransmissionSig  string          `json:"transmission_sig"`
		TransmissionTime string          `json:"transmission_time"`
		WebhookID        string          `json:"webhook_id"`
		WebhookEvent     json.RawMessage `json:"webhook_event"`
	}
	if json.NewDecoder(r.Body).Decode(&req) != nil || req.AuthAlgo == "" || req.CertURL == "" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	status := "FAILURE"
	if req.WebhookID == f.webhookID && req.TransmissionSig == f.sign(req.TransmissionID, req.TransmissionTime, req.WebhookEvent) {
		status = "SUCCESS"
	}
	_ = json.NewEncoder(w).Encode(map[string]string{"verification_status": status})
}

func (f *fakePayPal) sign(id, at string, event []byte) string {
	mac := hmac.New(sha256.New, f.key)
	fmt.Fprintf(mac, "%s|%s|%s|%d", id, at, f.webhookID, crc32.ChecksumIEEE(event))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// headers are PayPal's transmission headers for body sent at at.
func (f *fakePayPal) headers(body string, at time.Time) http.Header {
	ts := at.UTC().Format(time.RFC3339)
	return hdr("PAYPAL-AUTH-ALGO", "SHA256withRSA", "PAYPAL-CERT-URL", "https://api.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-1d93a270",
		"PAYPAL-TRANSMISSION-ID", "69cd13f0-d67a-11e5-baa3-778b53f4ae55", "PAYPAL-TRANSMISSION-SIG", f.sign("69cd13f0-d67a-11e5-baa3-778b53f4ae55", ts, []byte(body)),
		"PAYPAL-TRANSMISSION-TIME", ts, "Content-Type", "application/json")
}

func (f *fakePayPal) calls() (tokens, verifies int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tokenCalls, f.verifyCalls
}

func (f *fakePayPal) set(fn func(f *fakePayPal)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakePayPal) verifier(t *testing.T, now *time.Time, edit func(*PayPalConfig)) Verifier {
	t.Helper()
	pc := &PayPalConfig{APIBase: f.srv.URL, ClientID: f.clientID, ClientSecret: f.secret, WebhookID: f.webhookID}
	if edit != nil {
		edit(pc)
	}
	v, err := New(Config{Provider: ProviderPayPal, PayPal: pc, Now: func() time.Time { return *now }})
	require.NoError(t, err)
	return v
}

func TestPayPal(t *testing.T) {
	t.Parallel()
	want := Delivery{ID: "WH-2WR32451HC0233532-67976317FL4543714", EventType: "PAYMENT.CAPTURE.COMPLETED", OccurredAt: minuteUTC()}
	leaks := []string{payPalSecret, "A21AAFake"}

	t.Run("valid, token cached until it expires", func(t *testing.T) {
		t.Parallel()
		f := newFakePayPal(t)
		f.set(func(f *fakePayPal) { f.expiresIn = 600 })
		now := testNow
		v := f.verifier(t, &now, nil)
		for range 2 {
			got, err := v.Verify([]byte(payPalEvent), f.headers(payPalEvent, now))
			require.NoError(t, err)
			require.Equal(t, want, got)
		}
		tokens, verifies := f.calls()
		require.Equal(t, 1, tokens, "the token is cached")
		require.Equal(t, 2, verifies)

		now = now.Add(9*time.Minute + time.Second) // within a minute of expiry: renewed
		_, err := v.Verify([]byte(payPalEvent), f.headers(payPalEvent, now))
		require.NoError(t, err)
		tokens, _ = f.calls()
		require.Equal(t, 2, tokens)
	})

	t.Run("revoked token is renewed once", func(t *testing.T) {
		t.Parallel()
		f := newFakePayPal(t)
		now := testNow
		v := f.verifier(t, &now, nil)
		_, err := v.Verify([]byte(payPalEvent), f.headers(payPalEvent, now))
		require.NoError(t, err)
		f.set(func(f *fakePayPal) { f.live = map[string]bool{} })
		got, err := VerifyRequest(context.Background(), v, Request{Body: []byte(payPalEvent), Header: f.headers(payPalEvent, now)})
		require.NoError(t, err)
		require.Equal(t, want, got)
		tokens, _ := f.calls()
		require.Equal(t, 2, tokens)
	})

	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		f := newFakePayPal(t)
		now := testNow
		v := f.verifier(t, &now, nil)
		tampered := strings.Replace(payPalEvent, "7.47", "747.00", 1)
		_, err := v.Verify([]byte(tampered), f.headers(payPalEvent, now))
		requireVerifyErr(t, err, ErrInvalidSignature, leaks...)

		_, err = f.verifier(t, &now, func(c *PayPalConfig) { c.WebhookID = "OTHERWEBHOOK" }).Verify([]byte(payPalEvent), f.headers(payPalEvent, now))
		requireVerifyErr(t, err, ErrInvalidSignature, leaks...)

		forged := f.headers(payPalEvent, now)
		forged.Set("PAYPAL-TRANSMISSION-SIG", base64.StdEncoding.EncodeToString([]byte("forged")))
		_, err = v.Verify([]byte(payPalEvent), forged)
		requireVerifyErr(t, err, ErrInvalidSignature, leaks...)

		for _, skew := range []time.Duration{-10 * time.Minute, 10 * time.Minute} {
			_, err = v.Verify([]byte(payPalEvent), f.headers(payPalEvent, now.Add(skew)))
			requireVerifyErr(t, err, ErrTimestampOutOfTolerance)
		}
		missing := f.headers(payPalEvent, now)
		missing.Del("PAYPAL-TRANSMISSION-SIG")
		_, err = v.Verify([]byte(payPalEvent), missing)
		requireVerifyErr(t, err, ErrMissingHeader)
		_, err = v.Verify([]byte("not json"), f.headers("not json", now))
		requireVerifyErr(t, err, ErrInvalidPayload)

		_, verifies := f.calls()
		require.Equal(t, 3, verifies, "stale, missing and malformed requests cost no API call")
	})

	t.Run("outage is unavailable, never a refusal", func(t *testing.T) {
		t.Parallel()
		now := testNow
		for name, edit := range map[string]func(f *fakePayPal){
			"verify API 500":        func(f *fakePayPal) { f.verifyStatus = http.StatusInternalServerError },
			"verify API 400":        func(f *fakePayPal) { f.verifyStatus = http.StatusBadRequest },
			"token endpoint 503":    func(f *fakePayPal) { f.tokenStatus = http.StatusServiceUnavailable },
			"our credentials wrong": func(f *fakePayPal) { f.secret = "rotated-at-paypal" },
			"verify API keeps 401":  func(f *fakePayPal) { f.verifyStatus = http.StatusUnauthorized },
		} {
			f := newFakePayPal(t)
			v := f.verifier(t, &now, nil)
			f.set(edit)
			_, err := v.Verify([]byte(payPalEvent), f.headers(payPalEvent, now))
			requireVerifyErr(t, err, ErrUnavailable, leaks...)
			require.NotErrorIs(t, err, ErrInvalidSignature, name)
		}

		f := newFakePayPal(t)
		v := f.verifier(t, &now, nil)
		f.srv.Close()
		_, err := v.Verify([]byte(payPalEvent), f.headers(payPalEvent, now))
		requireVerifyErr(t, err, ErrUnavailable, leaks...)
		require.ErrorContains(t, err, "did not answer")

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = newFakePayPal(t).verifier(t, &now, nil).(RequestVerifier).VerifyRequest(ctx, Request{Body: []byte(payPalEvent), Header: f.headers(payPalEvent, now)})
		requireVerifyErr(t, err, ErrUnavailable)
	})

	t.Run("config", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			pc  *PayPalConfig
			key string
		}{
			{nil, "paypal"},
			{&PayPalConfig{ClientSecret: "s", WebhookID: "w"}, "paypal.client_id"},
			{&PayPalConfig{ClientID: "c", WebhookID: "w"}, "paypal.client_secret"},
			{&PayPalConfig{ClientID: "c", ClientSecret: "s"}, "paypal.webhook_id"},
			{&PayPalConfig{APIBase: "api-m.paypal.com", ClientID: "c", ClientSecret: "s", WebhookID: "w"}, "paypal.api_base"},
		} {
			_, err := New(Config{Provider: ProviderPayPal, PayPal: tc.pc})
			var cerr *ConfigError
			require.ErrorAs(t, err, &cerr)
			require.Equal(t, tc.key, cerr.Key)
		}
		_, err := New(Config{Provider: ProviderStripe, Secrets: []string{"s"}, PayPal: &PayPalConfig{}})
		require.ErrorContains(t, err, "paypal: only paypal sources take a paypal block")
		_, err = NewSigner(ProviderPayPal, "x")
		require.ErrorContains(t, err, "PayPal signs with its certificate")
	})
}
