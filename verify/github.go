package verify

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
)

// Header names as GitHub documents them; http.Header canonicalizes them
// ("X-Github-Delivery") on lookup, so the spelling here is for messages.
const (
	gitHubDeliveryHeader  = "X-GitHub-Delivery"
	gitHubEventHeader     = "X-GitHub-Event"
	gitHubSignatureHeader = "X-Hub-Signature-256"
	gitHubSHA1Header      = "X-Hub-Signature"
	gitHubSignaturePrefix = "sha256="
)

type gitHubVerifier struct {
	secrets [][]byte
}

func newGitHubVerifier(cfg Config) (Verifier, error) {
	v := &gitHubVerifier{}
	for _, s := range cfg.Secrets {
		v.secrets = append(v.secrets, []byte(s))
	}
	return v, nil
}

func (v *gitHubVerifier) Verify(body []byte, header http.Header) (Delivery, error) {
	vals, err := requiredHeaders(header, gitHubDeliveryHeader, gitHubEventHeader)
	if err != nil {
		return Delivery{}, err
	}
	id, event := vals[0], vals[1]
	sig := headerValue(header, gitHubSignatureHeader)
	if sig == "" {
		// go-github's ValidatePayload falls back to this SHA-1 header; we
		// do not, and say so, because "missing" alone would puzzle someone
		// looking at a request that carries a signature.
		if headerValue(header, gitHubSHA1Header) != "" {
			return Delivery{}, fmt.Errorf("%w: %s (the SHA-1 %s header is not accepted)",
				ErrMissingHeader, gitHubSignatureHeader, gitHubSHA1Header)
		}
		return Delivery{}, fmt.Errorf("%w: %s", ErrMissingHeader, gitHubSignatureHeader)
	}

	// Parse first: github.ValidateSignature also accepts sha1= and sha512=,
	// and we accept SHA-256 only.
	if _, err := parseGitHubSignature(sig); err != nil {
		return Delivery{}, err
	}
	if !v.matches(sig, body) {
		return Delivery{}, fmt.Errorf("%w: no configured secret matches %s; check the webhook secret",
			ErrInvalidSignature, gitHubSignatureHeader)
	}

	if err := checkGitHubBody(body, headerValue(header, "Content-Type")); err != nil {
		return Delivery{}, err
	}
	if err := checkID(gitHubDeliveryHeader+" header", id); err != nil {
		return Delivery{}, err
	}
	if err := checkID(gitHubEventHeader+" header", event); err != nil {
		return Delivery{}, err
	}
	// GitHub's payloads carry no single event time, so OccurredAt stays zero.
	return Delivery{ID: id, EventType: event}, nil
}

func (v *gitHubVerifier) matches(sig string, body []byte) bool {
	for _, secret := range v.secrets {
		// ValidateSignature compares with hmac.Equal.
		if github.ValidateSignature(sig, body, secret) == nil {
			return true
		}
	}
	return false
}

// parseGitHubSignature decodes an X-Hub-Signature-256 value, which must be
// "sha256=" and 64 hex digits.
func parseGitHubSignature(header string) ([]byte, error) {
	hexSig, ok := strings.CutPrefix(header, gitHubSignaturePrefix)
	if !ok {
		return nil, fmt.Errorf("%w: %s must be %s followed by the hex HMAC-SHA256 of the body",
			ErrInvalidSignature, gitHubSignatureHeader, gitHubSignaturePrefix)
	}
	mac, err := hex.DecodeString(hexSig)
	if err != nil || len(mac) != sha256.Size {
		return nil, fmt.Errorf("%w: %s must hold %d hex digits after %s",
			ErrInvalidSignature, gitHubSignatureHeader, 2*sha256.Size, gitHubSignaturePrefix)
	}
	return mac, nil
}

var errGitHubForm = fmt.Errorf("%w: body is form-encoded (application/x-www-form-urlencoded); "+
	"set the webhook's content type to application/json in its GitHub settings", ErrInvalidPayload)

// checkGitHubBody requires a JSON object. GitHub's other content type wraps
// the JSON in a "payload" form field; the signature still covers the raw
// body so it verifies, but everything downstream expects JSON, so we refuse
// it with a message that tells the user the one setting to change.
func checkGitHubBody(body []byte, contentType string) error {
	if trimmed := trimJSONSpace(body); len(trimmed) > 0 && trimmed[0] == '{' {
		if !validJSON(trimmed) {
			return fmt.Errorf("%w: body is not valid JSON", ErrInvalidPayload)
		}
		return nil
	}
	if bytes.HasPrefix(body, []byte("payload=")) ||
		strings.HasPrefix(strings.ToLower(contentType), "application/x-www-form-urlencoded") {
		return errGitHubForm
	}
	return fmt.Errorf("%w: body is not a JSON object", ErrInvalidPayload)
}

type gitHubSigner struct {
	secret []byte
}

func newGitHubSigner(cfg Config) (Signer, error) {
	return &gitHubSigner{secret: []byte(cfg.Secrets[0])}, nil
}

// Sign ignores now: GitHub signs no timestamp.
func (s *gitHubSigner) Sign(body []byte, msg Message, _ time.Time) (http.Header, error) {
	if msg.ID == "" {
		return nil, errors.New("github: Message.ID is required (sent as X-GitHub-Delivery)")
	}
	if msg.EventType == "" {
		return nil, errors.New("github: Message.EventType is required (sent as X-GitHub-Event)")
	}
	h := http.Header{}
	h.Set(gitHubDeliveryHeader, msg.ID)
	h.Set(gitHubEventHeader, msg.EventType)
	h.Set(gitHubSignatureHeader, gitHubSignaturePrefix+hex.EncodeToString(signHMAC(s.secret, body)))
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "GitHub-Hookshot/hookinbox")
	return h, nil
}
