package ingest_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/verify"
)

// payPalAPI answers PayPal's token and verify-webhook-signature calls in
// PayPal's shape; down makes the verification API fail as in an outage.
// (verify's tests check the signature logic against a fuller fake.)
func payPalAPI(t *testing.T, down *atomic.Bool) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/oauth2/token", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"access_token":"A21AAFake","token_type":"Bearer","expires_in":32400}`)
	})
	mux.HandleFunc("POST /v1/notifications/verify-webhook-signature", func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, `{"verification_status":"SUCCESS"}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func payPalHeaders(at time.Time) http.Header {
	h := http.Header{}
	for k, v := range map[string]string{"PAYPAL-AUTH-ALGO": "SHA256withRSA", "PAYPAL-CERT-URL": "https://api.paypal.com/v1/notifications/certs/CERT-1",
		"PAYPAL-TRANSMISSION-ID": "69cd13f0-d67a-11e5-baa3-778b53f4ae55", "PAYPAL-TRANSMISSION-SIG": "c2ln",
		"PAYPAL-TRANSMISSION-TIME": at.UTC().Format(time.RFC3339), "Content-Type": "application/json"} {
		h.Set(k, v)
	}
	return h
}

// TestPayPalOutageIs503: while PayPal's API fails, a PayPal delivery gets a
// 503 with Retry-After and is not stored (PayPal retries); once it answers,
// the delivery is stored, and its retry is a duplicate.
func TestPayPalOutageIs503(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	api := payPalAPI(t, &down)
	v, err := verify.New(verify.Config{Provider: verify.ProviderPayPal,
		PayPal: &verify.PayPalConfig{APIBase: api.URL, ClientID: "id", ClientSecret: "secret", WebhookID: "WH1"}})
	require.NoError(t, err)
	b := setupWith(t, setupOpts{sources: []ingest.Source{{Name: "paypal", Provider: verify.ProviderPayPal, Verifier: v}}})
	body := []byte(`{"id":"WH-2WR32451HC0233532-67976317FL4543714","create_time":"2024-03-01T11:59:00Z","event_type":"PAYMENT.CAPTURE.COMPLETED","resource":{"id":"42311647XV020574X"}}`)

	down.Store(true)
	r := b.post(t, "/webhooks/paypal", body, payPalHeaders(time.Now()))
	require.Equal(t, http.StatusServiceUnavailable, r.status, "%s", r.raw)
	require.Equal(t, ingest.CodeUnavailable, r.Error.Code)
	require.Equal(t, "5", r.header.Get("Retry-After"))
	require.Equal(t, "could not verify the delivery now; retry later", r.Error.Message)
	require.Equal(t, counts{}, b.counts(t), "nothing stored during the outage")

	down.Store(false)
	r = b.post(t, "/webhooks/paypal", body, payPalHeaders(time.Now()))
	require.Equal(t, http.StatusAccepted, r.status, "%s", r.raw)
	require.Equal(t, "WH-2WR32451HC0233532-67976317FL4543714", r.DeliveryID)
	r = b.post(t, "/webhooks/paypal", body, payPalHeaders(time.Now()))
	require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
	require.Equal(t, "duplicate", r.Status)
}

// TestTwilioAndMailgunDuplicates: a retry is a 200 duplicate. A Mailgun
// token reused with another body, which Mailgun's signature does not
// cover, is refused as a conflict and stores nothing.
func TestTwilioAndMailgunDuplicates(t *testing.T) {
	t.Parallel()
	const twilioURL = "https://hooks.example.com/webhooks/twilio"
	twilio, err := verify.New(verify.Config{Provider: verify.ProviderTwilio, Secrets: []string{"twilio-token"}, NotificationURL: twilioURL})
	require.NoError(t, err)
	mailgun, err := verify.New(verify.Config{Provider: verify.ProviderMailgun, Secrets: []string{"mailgun-key"}})
	require.NoError(t, err)
	b := setupWith(t, setupOpts{sources: []ingest.Source{
		{Name: "twilio", Provider: verify.ProviderTwilio, Verifier: twilio},
		{Name: "mailgun", Provider: verify.ProviderMailgun, Verifier: mailgun},
	}})

	form := []byte("MessageSid=SM1&MessageStatus=delivered")
	signer, err := verify.NewConfigSigner(verify.Config{Provider: verify.ProviderTwilio, Secrets: []string{"twilio-token"}, NotificationURL: twilioURL})
	require.NoError(t, err)
	h, err := signer.Sign(form, verify.Message{ID: "idem-1"}, time.Now())
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, b.post(t, "/webhooks/twilio", form, h).status)
	again := b.post(t, "/webhooks/twilio", form, h)
	require.Equal(t, http.StatusOK, again.status, "%s", again.raw)
	require.Equal(t, "idem-1", again.DeliveryID)

	ts := time.Now().Unix()
	mac := hmac.New(sha256.New, []byte("mailgun-key"))
	fmt.Fprintf(mac, "%d%s", ts, "tok-1")
	mailgunBody := fmt.Sprintf(`{"signature":{"timestamp":"%d","token":"tok-1","signature":"%s"},"event-data":{"event":"opened","timestamp":%d}}`,
		ts, hex.EncodeToString(mac.Sum(nil)), ts)
	require.Equal(t, http.StatusAccepted, b.post(t, "/webhooks/mailgun", []byte(mailgunBody), http.Header{}).status)
	require.Equal(t, http.StatusOK, b.post(t, "/webhooks/mailgun", []byte(mailgunBody), http.Header{}).status)
	replayed := strings.Replace(mailgunBody, `"opened"`, `"unsubscribed"`, 1)
	r := b.post(t, "/webhooks/mailgun", []byte(replayed), http.Header{})
	require.Equal(t, http.StatusConflict, r.status, "%s", r.raw)
	require.Equal(t, counts{inbox: 2, jobs: 2}, b.counts(t))
}
