package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/verify"
)

// Logs are JSON when asked, every line about a delivery names it, and no
// secret, signature or credential ever reaches them.
func TestLogsNameDeliveriesAndHoldNoSecrets(t *testing.T) {
	t.Parallel()
	const (
		ghSecret    = "gh-secret-must-not-be-logged"
		proxyAuth   = "Bearer proxy-credential-must-not-be-logged"
		cookieValue = "session=cookie-must-not-be-logged"
	)
	dbURL := testdb.URL(t)
	b := setupEnv(t, dbURL, map[string]string{"GITHUB_WEBHOOK_SECRET": ghSecret})
	require.NoError(t, appendConfig(b.configPath, "log: {format: json, level: debug}\n"))
	b.serve(t)

	signer, err := verify.NewSigner("github", ghSecret)
	require.NoError(t, err)
	var signatures []string
	post := func(id, secretOverride string) int {
		body := []byte(`{"action":"opened","issue":{"number":7,"title":"t","updated_at":"2026-11-30T09:00:00Z"},"repository":{"full_name":"acme/app"}}`)
		s := signer
		if secretOverride != "" {
			s, _ = verify.NewSigner("github", secretOverride)
		}
		h, err := s.Sign(body, verify.Message{ID: id, EventType: "issues"}, time.Now())
		require.NoError(t, err)
		signatures = append(signatures, strings.TrimPrefix(h.Get("X-Hub-Signature-256"), "sha256="))
		req, _ := http.NewRequest(http.MethodPost, "http://"+b.listen+"/webhooks/github", bytes.NewReader(body))
		req.Header = h
		req.Header.Set("Authorization", proxyAuth)
		req.Header.Set("Cookie", cookieValue)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusAccepted, post("log-1", ""))
	require.Equal(t, http.StatusOK, post("log-1", ""))
	require.Equal(t, http.StatusUnauthorized, post("log-2", "forged-secret"))
	status, _ := b.adminGet(t, "/admin/deliveries", true)
	require.Equal(t, http.StatusOK, status)
	status, _ = b.adminGet(t, "/admin/deliveries", false)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Eventually(t, func() bool { return strings.Contains(b.stderr.String(), `"msg":"delivery processed"`) },
		10*time.Second, 20*time.Millisecond)

	logs := b.stderr.String()
	for _, secret := range append([]string{ghSecret, proxyAuth, "proxy-credential", cookieValue, adminToken, "forged-secret",
		passwordOf(t, dbURL)}, signatures...) {
		require.NotContains(t, logs, secret)
	}
	lines := 0
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line), "not JSON: %s", sc.Text())
		if _, ok := line["delivery_id"]; ok {
			lines++
			require.Contains(t, line, "source", sc.Text())
			require.Contains(t, line, "inbox_id", sc.Text())
		}
	}
	require.GreaterOrEqual(t, lines, 3, "accepted, duplicate, processed")
}

func passwordOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := neturl.Parse(raw)
	require.NoError(t, err)
	p, ok := u.User.Password()
	require.True(t, ok)
	return p
}
