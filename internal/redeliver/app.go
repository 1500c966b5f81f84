package redeliver

import (
	"crypto/rsa"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// GitHub refuses an App JWT that expires more than 10 minutes after it was
// issued, and one issued in its future: issue it a minute in the past (for
// clock drift), let it live 9 minutes, and renew it a minute before then.
const (
	appJWTBackdate = time.Minute
	appJWTLifetime = 9 * time.Minute
	appJWTRenew    = time.Minute
)

// loadAppKey reads an App's private key: PEM text, or the path of a file
// holding it. Its errors name the key and never quote it.
func loadAppKey(value string) (*rsa.PrivateKey, error) {
	pemText := []byte(value)
	if !strings.Contains(value, "-----BEGIN") {
		raw, err := os.ReadFile(value)
		if err != nil {
			return nil, configErr("github.private_key", fmt.Sprintf("github.private_key is neither PEM nor a readable file: %v", err))
		}
		pemText = raw
	}
	key, err := jwt.ParseRSAPrivateKeyFromPEM(pemText)
	if err != nil {
		return nil, configErr("github.private_key", "github.private_key is not an RSA private key in PEM (the .pem file GitHub generates for the App)")
	}
	return key, nil
}

// appTransport authenticates as a GitHub App: each request carries a
// short-lived RS256 JWT signed with the App's private key, renewed before
// it expires.
type appTransport struct {
	base  http.RoundTripper
	appID int64
	key   *rsa.PrivateKey
	now   func() time.Time

	mu      sync.Mutex
	token   string
	expires time.Time
}

func (t *appTransport) jwt() (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if t.token != "" && now.Before(t.expires.Add(-appJWTRenew)) {
		return t.token, nil
	}
	issued := now.Add(-appJWTBackdate)
	expires := issued.Add(appJWTLifetime)
	token, err := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.RegisteredClaims{
		Issuer:    strconv.FormatInt(t.appID, 10),
		IssuedAt:  jwt.NewNumericDate(issued),
		ExpiresAt: jwt.NewNumericDate(expires),
	}).SignedString(t.key)
	if err != nil {
		return "", fmt.Errorf("sign the GitHub App JWT: %w", err)
	}
	t.token, t.expires = token, expires
	return token, nil
}

func (t *appTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	token, err := t.jwt()
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+token)
	return t.base.RoundTrip(req)
}

// jwtPattern matches a JWT, so one echoed in an error is redacted like a
// token.
var jwtPattern = regexp.MustCompile(`eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+`)
