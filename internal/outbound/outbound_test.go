package outbound_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/outbound"
)

func TestMaskURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"https://api.example.com/hooks", "https://api.example.com/hooks"},
		{"https://api.example.com/hooks?api_key=s3cret&v=2", "https://api.example.com/hooks?api_key=***&v=***"},
		{"https://user:pa55@api.example.com/hooks", "https://***@api.example.com/hooks"},
		{"https://tok3n@api.example.com/", "https://***@api.example.com/"},
		{"https://api.example.com/a?flag&key=x#frag", "https://api.example.com/a?***&key=***#***"},
		{"https://api.example.com/a?SECRETTOKEN", "https://api.example.com/a?***"},
		{"/relative?token=x", "/relative?token=***"},
		{"http://[::1%zz/?token=x", "http://[::1%zz/?***"},
		// Tokens in the path: Slack's and Discord's webhook URLs.
		{"https://hooks.slack.com/services/T0001/B0002/Xk2s3cretXk2s3cretXk2s", "https://hooks.slack.com/services/T0001/B0002/***"},
		{"https://discord.com/api/webhooks/1234567890/abcDEF123s3cret_-ghiJKL456", "https://discord.com/api/webhooks/1234567890/***"},
		{"https://orders.internal/webhooks/orders-fulfillment-events", "https://orders.internal/webhooks/orders-fulfillment-events"},
		// What does not parse keeps no userinfo, query or fragment.
		{"https://user:pa#55@host/x", "https://***@host/x"},
		{"user:pa55word@host/hook", "***@host/hook"},
		{"https://user:p%zz@host/?tok3n=1", "https://***@host/?***"},
	} {
		got := outbound.MaskURL(tc.in)
		require.Equal(t, tc.want, got, tc.in)
		for _, secret := range []string{"s3cret", "pa55", "tok3n", "frag", "=x", "SECRETTOKEN", "p%zz"} {
			require.NotContains(t, got, secret, tc.in)
		}
	}
}

// Go's client names the URL, query and all, in its errors; the masked
// text keeps the error and drops the secrets.
func TestMaskErrorOfAFailedRequest(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close() // nothing listens there now
	raw := strings.Replace(addr, "http://", "http://user:pa55@", 1) + "/hooks?api_key=s3cret"
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, raw, nil)
	require.NoError(t, err)
	_, err = http.DefaultClient.Do(req)
	require.Error(t, err)
	require.Contains(t, err.Error(), "s3cret", "the unmasked error names the query")

	masked := outbound.MaskError(err)
	require.ErrorIs(t, masked, syscall.ECONNREFUSED, "the masked error still unwraps")
	msg := masked.Error()
	require.NotContains(t, msg, "s3cret")
	require.NotContains(t, msg, "pa55")
	require.Contains(t, msg, "api_key=***")
	require.Contains(t, msg, "connection refused")
}

func TestRedirectsAreAnswersNotFollowed(t *testing.T) {
	t.Parallel()
	var landed bool
	landing := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { landed = true }))
	t.Cleanup(landing.Close)
	srv := httptest.NewServer(http.RedirectHandler(landing.URL+"/login?next=x", http.StatusFound))
	t.Cleanup(srv.Close)

	resp, err := outbound.NoRedirects(nil).Post(srv.URL, "application/json", strings.NewReader("{}"))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode)
	require.False(t, landed)
	require.True(t, outbound.IsRedirect(resp.StatusCode))

	msg := outbound.RedirectError(resp.StatusCode, resp.Header.Get("Location"))
	require.Contains(t, msg, "HTTP 302 redirect (Location "+landing.URL+"/login?next=***)")
	require.Contains(t, msg, "set the URL to the address that accepts the POST")
	require.Contains(t, outbound.RedirectError(http.StatusMovedPermanently, ""), "no Location")
	require.Contains(t, outbound.RedirectError(http.StatusFound, "https://x.example/"+strings.Repeat("a", 1000)), "…")
}
