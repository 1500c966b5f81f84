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
		{"https://api.example.com", "https://api.example.com"},
		{"https://api.example.com/", "https://api.example.com/"},
		{"https://api.example.com/hooks", "https://api.example.com/***"},
		{"https://api.example.com/hooks?api_key=s3cret&v=2", "https://api.example.com/***?api_key=***&v=***"},
		{"https://user:pa55@api.example.com/hooks", "https://***@api.example.com/***"},
		{"https://tok3n@api.example.com/", "https://***@api.example.com/"},
		{"https://api.example.com/a?flag&key=x#frag", "https://api.example.com/***?***&key=***#***"},
		{"https://api.example.com/a?SECRETTOKEN", "https://api.example.com/***?***"},
		{"/relative?token=x", "/***?token=***"},
		{"http://[::1%zz/?token=x", "http://[::1%zz/?***"},
		// Secrets in the path, whatever they look like: Slack's (letters
		// only at the end), Discord's, a self-made one, escaped ones.
		{"https://hooks.slack.com/services/T0123ABCD/B0123ABCD/abcdefghijklmnopqrstuvwx", "https://hooks.slack.com/***/***/***/***"},
		{"https://discord.com/api/webhooks/1234567890/abcDEF123s3cret_-ghiJKL456", "https://discord.com/***/***/***/***"},
		{"https://orders.internal/hooks/s3cr3t-t0ken", "https://orders.internal/***/***"},
		{"https://orders.internal/hooks/tok%2F3n/", "https://orders.internal/***/***/"},
		{"https://orders.internal/hooks/tok%203n", "https://orders.internal/***/***"},
		// What does not parse keeps no userinfo, path, query or fragment.
		{"https://user:pa#55@host/x", "https://***@host/***"},
		{"user:pa55word@host/hook", "***@host/***"},
		{"https://user:p%zz@host/?tok3n=1", "https://***@host/?***"},
		{"https://host/s3cr3t-t0ken%zz?x", "https://host/***?***"},
		{"http://[::1%zz/s3cr3t-t0ken", "http://[::1%zz/***"},
	} {
		got := outbound.MaskURL(tc.in)
		require.Equal(t, tc.want, got, tc.in)
		for _, secret := range []string{"s3cret", "pa55", "tok3n", "frag", "=x", "SECRETTOKEN", "p%zz", "s3cr3t", "abcdefghijklmnopqrstuvwx", "T0123ABCD", "services", "webhooks", "relative"} {
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
	require.Contains(t, msg, "/***?api_key=***")
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
	require.Contains(t, msg, "HTTP 302 redirect (Location "+landing.URL+"/***?next=***)")
	require.Contains(t, msg, "set the URL to the address that accepts the POST")
	require.Contains(t, outbound.RedirectError(http.StatusMovedPermanently, ""), "no Location")
	require.Contains(t, outbound.RedirectError(http.StatusFound, "https://"+strings.Repeat("a", 1000)+".example/"), "…")
}

func TestIsHTTPURL(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"http://x", "https://api.example.com/v1/", "http://u:p@127.0.0.1:8080/?k=v"} {
		require.True(t, outbound.IsHTTPURL(ok), ok)
	}
	for _, bad := range []string{"", "/relative", "api.example.com", "ftp://x", "nats://n:4222", "https://", "http://%zz"} {
		require.False(t, outbound.IsHTTPURL(bad), bad)
	}
}
