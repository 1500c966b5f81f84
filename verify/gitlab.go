package verify

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// ProviderGitLab accepts both ways GitLab authenticates a webhook: the
// secret token it sends as X-Gitlab-Token, and the signing token, with
// which it signs as Standard Webhooks does.
const ProviderGitLab = "gitlab"

const (
	gitLabTokenHeader = "X-Gitlab-Token"
	gitLabEventHeader = "X-Gitlab-Event"
)

// gitLabFields are where a GitLab delivery says what it is, in both modes.
// Idempotency-Key stays the same across retries (and equals webhook-id);
// older GitLab sends only X-Gitlab-Event-UUID.
var gitLabFields = preset{
	ids:      []Field{{Header: "Idempotency-Key"}, {Header: "X-Gitlab-Event-UUID"}},
	types:    []Field{{Header: gitLabEventHeader}},
	occurred: []Field{{JSON: "object_attributes.updated_at"}},
	Resource: "object_attributes.id",
	// The secret token is the secret itself, sent with every request.
	secretHeaders: []string{gitLabTokenHeader},
}

// gitLabSigning is the signing-token mode: Standard Webhooks' headers and
// content, GitLab's event header.
var gitLabSigning = HMACScheme{
	SignatureHeader: standardSignatureHeader, SignaturePrefix: "v1,", SignatureSeparator: " ",
	SignedContent: "{id}.{timestamp}.{body}", Encoding: "base64", SecretEncoding: "whsec",
	// webhook-id is Idempotency-Key's value, so both modes dedupe alike.
	ID: Field{Header: standardIDHeader}, EventType: Field{Header: gitLabEventHeader},
	Timestamp:  &Field{Header: standardTimestampHeader, Signed: true},
	OccurredAt: &Field{JSON: "object_attributes.updated_at"},
}

type gitLabVerifier struct {
	// tokens are the SHA-256 of the secret tokens: comparing digests takes
	// the same time whatever the received token's length.
	tokens  [][]byte
	signing *hmacVerifier // nil: no signing token configured
	fields  *hmacVerifier // extracts the delivery in token mode
}

// newGitLabVerifier sorts the secrets by mode: "whsec_…" secrets are
// signing tokens, the others secret tokens; either mode may be configured,
// or both while moving from one to the other.
func newGitLabVerifier(cfg Config) (Verifier, error) {
	v := &gitLabVerifier{fields: &hmacVerifier{ids: gitLabFields.ids, types: gitLabFields.types, occurred: gitLabFields.occurred}}
	var signing []string
	for _, s := range cfg.Secrets {
		if strings.HasPrefix(s, standardSecretPrefix) {
			signing = append(signing, s)
			continue
		}
		sum := sha256.Sum256([]byte(s))
		v.tokens = append(v.tokens, sum[:])
	}
	if len(signing) > 0 {
		signCfg := cfg
		signCfg.Secrets = signing
		sv, err := buildHMACVerifier(signCfg, gitLabSigning)
		if err != nil {
			return nil, err
		}
		v.signing = sv
	}
	return v, nil
}

func (v *gitLabVerifier) Verify(body []byte, header http.Header) (Delivery, error) {
	if headerValue(header, standardSignatureHeader) != "" {
		if v.signing == nil {
			return Delivery{}, fmt.Errorf("%w: the request is signed (%s) but no signing token (whsec_…) is configured for this source",
				ErrInvalidSignature, standardSignatureHeader)
		}
		return v.signing.Verify(body, header)
	}
	token := headerValue(header, gitLabTokenHeader)
	if token == "" {
		return Delivery{}, fmt.Errorf("%w: %s (or %s, with a signing token)", ErrMissingHeader, gitLabTokenHeader, standardSignatureHeader)
	}
	if len(v.tokens) == 0 {
		return Delivery{}, fmt.Errorf("%w: this source accepts only signed requests (a signing token is configured), not %s",
			ErrInvalidSignature, gitLabTokenHeader)
	}
	sum := sha256.Sum256([]byte(token))
	matched := false
	for _, t := range v.tokens {
		matched = hmac.Equal(t, sum[:]) || matched
	}
	if !matched {
		return Delivery{}, fmt.Errorf("%w: %s matches no configured secret token", ErrInvalidSignature, gitLabTokenHeader)
	}
	return v.fields.extract(&document{body: body, header: header})
}

type gitLabSigner struct {
	token   string
	signing *hmacSigner
}

// newGitLabSigner signs in the mode of the secret: a signing token
// (whsec_…) signs, a secret token is sent as it is.
func newGitLabSigner(cfg Config) (Signer, error) {
	secret := cfg.Secrets[0]
	if !strings.HasPrefix(secret, standardSecretPrefix) {
		return &gitLabSigner{token: secret}, nil
	}
	signCfg := cfg
	signCfg.Secrets = cfg.Secrets[:1]
	v, err := buildHMACVerifier(signCfg, gitLabSigning)
	if err != nil {
		return nil, err
	}
	return &gitLabSigner{signing: &hmacSigner{v: v}}, nil
}

func (s *gitLabSigner) Sign(body []byte, msg Message, now time.Time) (http.Header, error) {
	if msg.ID == "" || msg.EventType == "" {
		return nil, errors.New("gitlab: Message.ID (Idempotency-Key) and Message.EventType (X-Gitlab-Event) are required")
	}
	var h http.Header
	if s.signing != nil {
		var err error
		if h, err = s.signing.Sign(body, msg, now); err != nil {
			return nil, err
		}
	} else {
		h = http.Header{}
		h.Set(gitLabTokenHeader, s.token)
		h.Set(gitLabEventHeader, msg.EventType)
		h.Set("Content-Type", "application/json")
	}
	h.Set("Idempotency-Key", msg.ID)
	h.Set("X-Gitlab-Event-UUID", msg.ID)
	return h, nil
}
