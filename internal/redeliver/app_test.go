package redeliver

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
)

const testAppID = 123456

// appKeyPEM is a fresh App private key, PEM as GitHub hands it out.
func appKeyPEM(t *testing.T) (*rsa.PrivateKey, string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	return key, string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
}

// setupApp is setup with the fake accepting JWTs of a GitHub App, and a
// Config for that App's hook.
func setupApp(t *testing.T) (*testBundle, Config) {
	t.Helper()
	b := setup(t)
	key, keyPEM := appKeyPEM(t)
	b.gh.appID, b.gh.appKey = testAppID, &key.PublicKey
	return b, Config{Source: "github-app", GitHubAPI: config.GitHubAPI{APIURL: b.gh.URL(), AppID: testAppID, PrivateKey: keyPEM}}
}

func TestRedeliverGitHubApp(t *testing.T) {
	t.Parallel()
	b, cfg := setupApp(t)
	b.gh.setPageSize(2)
	b.gh.add(appHook,
		attempt{ID: 1, GUID: guid(1), At: b.ago(50 * time.Minute), StatusCode: 500, Installation: 9},
		attempt{ID: 2, GUID: guid(2), At: b.ago(40 * time.Minute), StatusCode: 200, Installation: 9},
		attempt{ID: 3, GUID: guid(3), At: b.ago(30 * time.Minute), StatusCode: 0, Installation: 9},
		attempt{ID: 4, GUID: guid(3), At: b.ago(20 * time.Minute), StatusCode: 502, Redelivery: true, Installation: 9},
		attempt{ID: 5, GUID: guid(5), At: b.ago(10 * time.Minute), StatusCode: 503, Installation: 9},
	)
	b.insertInbox(t, "github-app", guid(5))

	res := b.redeliver(t, cfg, b.ago(time.Hour))

	// The same semantics and answer as a repository hook's.
	require.Equal(t, Result{Examined: 4, Failed: 3, AlreadyInInbox: 1, Redelivered: 2, Errors: []string{}}, res)
	require.Equal(t, []int64{1, 4}, b.gh.redeliveries())
	require.Equal(t, []listCall{
		{hook: appHook, perPage: "100"},
		{hook: appHook, perPage: "100", cursor: "v1_3"},
		{hook: appHook, perPage: "100", cursor: "v1_1"},
	}, b.gh.listCalls())
}

func TestRedeliverGitHubAppKeyFromFile(t *testing.T) {
	t.Parallel()
	b, cfg := setupApp(t)
	path := filepath.Join(t.TempDir(), "app.private-key.pem")
	require.NoError(t, os.WriteFile(path, []byte(cfg.PrivateKey), 0o600))
	cfg.PrivateKey = path
	b.gh.add(appHook, attempt{ID: 1, GUID: guid(1), At: b.ago(time.Minute), StatusCode: 500})

	res := b.redeliver(t, cfg, b.ago(time.Hour))

	require.Equal(t, Result{Examined: 1, Failed: 1, Redelivered: 1, Errors: []string{}}, res)
}

func TestRedeliverGitHubAppWrongKeyIsUnauthorized(t *testing.T) {
	t.Parallel()
	b, cfg := setupApp(t)
	_, other := appKeyPEM(t)
	cfg.PrivateKey = other
	b.gh.add(appHook, attempt{ID: 1, GUID: guid(1), At: b.ago(time.Minute), StatusCode: 500})

	_, err := Redeliver(context.Background(), b.pool, cfg, b.ago(time.Hour))

	require.ErrorIs(t, err, ErrUnauthorized)
	require.Contains(t, err.Error(), "GitHub App 123456's hook")
	require.NotContains(t, err.Error(), "eyJ", "no JWT in errors")
	require.Empty(t, b.gh.redeliveries())
}

func TestAppJWT(t *testing.T) {
	t.Parallel()
	key, _ := appKeyPEM(t)
	now := time.Now()
	tr := &appTransport{appID: testAppID, key: key, now: func() time.Time { return now }}
	first, err := tr.jwt()
	require.NoError(t, err)
	f := &fakeGitHub{appID: testAppID, appKey: &key.PublicKey}
	require.NoError(t, f.checkAppJWT(first))

	// Reused while it has over a minute left, renewed after.
	now = now.Add(6 * time.Minute)
	again, err := tr.jwt()
	require.NoError(t, err)
	require.Equal(t, first, again)
	now = now.Add(2 * time.Minute)
	renewed, err := tr.jwt()
	require.NoError(t, err)
	require.NotEqual(t, first, renewed)
}
