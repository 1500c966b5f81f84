package admin_test

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/testlog"
)

// from is a client whose connections come from ip, one of loopback's
// 127.0.0.0/8: a client address of its own for the sign-in limit.
func (b *testBundle) from(ip string) *testBundle {
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	other := *b
	other.client = newClient(b.t, &http.Transport{DialContext: dialer.DialContext})
	return &other
}

// signIn presents tok as via says: "bearer", "basic" or "form" (POST
// /login); more headers are added.
func (b *testBundle) signIn(t *testing.T, via, tok string, more map[string]string) response {
	t.Helper()
	switch via {
	case "bearer":
		return b.do(t, http.MethodGet, "/admin/deliveries", "", with(more, map[string]string{"Authorization": "Bearer " + tok}))
	case "basic":
		return b.do(t, http.MethodGet, "/admin/deliveries", "", with(more, map[string]string{"Authorization": basic("ops", tok)}))
	}
	return b.do(t, http.MethodPost, "/login", url.Values{"token": {tok}}.Encode(), with(more, map[string]string{"Authorization": "",
		"Content-Type": "application/x-www-form-urlencoded", "Origin": b.baseURL, "Sec-Fetch-Site": "same-origin"}))
}

// signedIn reports whether r is a sign-in that worked.
func signedIn(r response) bool {
	return r.status == http.StatusOK || r.status == http.StatusSeeOther
}

func requireThrottled(t *testing.T, r response, msg string) {
	t.Helper()
	require.Equal(t, http.StatusTooManyRequests, r.status, "%s: %s", msg, r.body)
	secs, err := strconv.Atoi(r.header.Get("Retry-After"))
	require.NoError(t, err, "%s: Retry-After %q", msg, r.header.Get("Retry-After"))
	require.Positive(t, secs, msg)
}

// Wrong tokens, however presented, spend a client address's tries; then
// the address gets 429 with Retry-After, its right token included (or
// the 429 would tell a right guess from a wrong one). Another address
// signs in as before, a header naming another client changes nothing,
// and a request presenting no token is no guess. Each failure is logged
// with the client's address.
func TestWrongTokensAreSlowedPerAddress(t *testing.T) {
	t.Parallel()
	logger, log := testlog.New(t)
	b := setupWith(t, setupOpts{noWorker: true, cfg: func(c *admin.Config) {
		c.SignIn.Burst, c.SignIn.Every, c.Logger = 3, config.Duration(time.Hour), logger
	}})
	guesser, operator := b.from("127.0.0.2"), b.from("127.0.0.3")

	for _, via := range []string{"bearer", "basic", "form"} {
		require.Equal(t, http.StatusUnauthorized, guesser.signIn(t, via, "guess-"+via, nil).status, via)
	}
	for _, via := range []string{"bearer", "basic", "form"} {
		requireThrottled(t, guesser.signIn(t, via, "guess-"+via, nil), "wrong "+via)
		requireThrottled(t, guesser.signIn(t, via, token, nil), "right "+via)
	}
	r := guesser.signIn(t, "bearer", "guess", nil)
	require.Equal(t, admin.CodeSignInThrottled, r.errorCode(t))
	require.Contains(t, string(guesser.signIn(t, "form", token, nil).body), "Too many wrong tokens")
	for _, h := range []string{"X-Forwarded-For", "X-Real-Ip", "Forwarded"} {
		requireThrottled(t, guesser.signIn(t, "bearer", token, map[string]string{h: "127.0.0.9"}), h)
	}
	r = guesser.do(t, http.MethodGet, "/admin/deliveries", "", map[string]string{"Authorization": ""})
	require.Equal(t, http.StatusUnauthorized, r.status, "no token, no guess: %s", r.body)
	require.Equal(t, http.StatusOK, guesser.do(t, http.MethodGet, "/login", "", map[string]string{"Authorization": ""}).status)

	for _, via := range []string{"bearer", "basic", "form"} {
		require.True(t, signedIn(operator.signIn(t, via, token, nil)), via)
	}
	require.Equal(t, http.StatusUnauthorized, operator.signIn(t, "bearer", "typo", nil).status, "the operator's tries are its own")

	failed := strings.Count(log.String(), "admin sign-in failed")
	require.Positive(t, failed, log.String())
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		if strings.Contains(line, "admin sign-in") {
			require.Regexp(t, `remote_addr=127\.0\.0\.[23]:\d+`, line)
			require.NotContains(t, line, token)
		}
	}
}

// A right token gives its try back, and a slowed address gets one more
// try per SignIn.Every: an operator's typos cost a moment, never a
// lockout.
func TestSignInTriesComeBack(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true, cfg: func(c *admin.Config) {
		c.SignIn.Burst, c.SignIn.Every = 1, config.Duration(200*time.Millisecond)
	}})
	operator := b.from("127.0.0.4")
	for range 5 {
		require.Equal(t, http.StatusOK, operator.signIn(t, "bearer", token, nil).status, "right tokens spend nothing")
	}
	require.Equal(t, http.StatusUnauthorized, operator.signIn(t, "bearer", "typo", nil).status)
	requireThrottled(t, operator.signIn(t, "bearer", token, nil), "right token, no tries left")
	require.Eventually(t, func() bool { return operator.signIn(t, "bearer", token, nil).status == http.StatusOK },
		5*time.Second, 50*time.Millisecond)
}

// Concurrent guesses cannot outrun the bucket: each takes its try before
// the token is compared.
func TestConcurrentGuessesGetTheBurstOnly(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true, cfg: func(c *admin.Config) {
		c.SignIn.Burst, c.SignIn.Every = 3, config.Duration(time.Hour)
	}})
	guesser := b.from("127.0.0.5")
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, b.baseURL+"/admin/deliveries", nil)
			if err != nil {
				panic(err)
			}
			req.Header.Set("Authorization", "Bearer guess-"+strconv.Itoa(i))
			resp, err := guesser.client.Do(req)
			if err != nil {
				panic(err)
			}
			resp.Body.Close()
			mu.Lock()
			statuses[resp.StatusCode]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	require.Equal(t, map[int]int{http.StatusUnauthorized: 3, http.StatusTooManyRequests: 37}, statuses)
}

// The table of addresses is bounded: once full of addresses still
// slowed, the ones left out share one bucket instead of adding rows, so
// many addresses buy a guesser no more than the table holds.
func TestSignInTableIsBounded(t *testing.T) {
	t.Parallel()
	b := setupWith(t, setupOpts{noWorker: true, cfg: func(c *admin.Config) {
		c.SignIn.Burst, c.SignIn.Every, c.SignInAddresses = 1, config.Duration(time.Hour), 2
	}})
	for _, ip := range []string{"127.0.0.6", "127.0.0.7", "127.0.0.8"} {
		require.Equal(t, http.StatusUnauthorized, b.from(ip).signIn(t, "bearer", "guess", nil).status, ip)
	}
	requireThrottled(t, b.from("127.0.0.9").signIn(t, "bearer", "guess", nil), "a new address beyond the table shares its bucket")
}
