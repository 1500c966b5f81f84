package verify

import (
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// ProviderDiscord verifies Discord's Ed25519 signatures with the
// application's public key (the source's secrets are public keys, hex).
const ProviderDiscord = "discord"

const (
	discordSignatureHeader = "X-Signature-Ed25519"
	discordTimestampHeader = "X-Signature-Timestamp"
)

// discordInteractionTypes names interaction types, so an event type reads
// as a word rather than a number.
var discordInteractionTypes = map[string]string{
	"2": "APPLICATION_COMMAND", "3": "MESSAGE_COMPONENT", "4": "APPLICATION_COMMAND_AUTOCOMPLETE", "5": "MODAL_SUBMIT",
}

// discordEpochMillis is the first millisecond of 2015, where snowflake ids
// count from.
const discordEpochMillis = 1420070400000

type discordVerifier struct {
	keys      []ed25519.PublicKey
	tolerance time.Duration
	now       func() time.Time
}

func newDiscordVerifier(cfg Config) (Verifier, error) {
	v := &discordVerifier{tolerance: cfg.Tolerance, now: cfg.Now}
	for i, s := range cfg.Secrets {
		key, err := hex.DecodeString(s)
		if err != nil || len(key) != ed25519.PublicKeySize {
			return nil, configErr("secrets", "secret %d of %d is not the application's public key (64 hex digits)", i+1, len(cfg.Secrets))
		}
		v.keys = append(v.keys, key)
	}
	return v, nil
}

func (v *discordVerifier) Verify(body []byte, header http.Header) (Delivery, error) {
	vals, err := requiredHeaders(header, discordSignatureHeader, discordTimestampHeader)
	if err != nil {
		return Delivery{}, err
	}
	sig, err := hex.DecodeString(vals[0])
	if err != nil || len(sig) != ed25519.SignatureSize {
		return Delivery{}, fmt.Errorf("%w: %s must be %d hex digits", ErrInvalidSignature, discordSignatureHeader, 2*ed25519.SignatureSize)
	}
	ts, ok := parseUnixSeconds(vals[1])
	if !ok {
		return Delivery{}, fmt.Errorf("%w: %s must be unix seconds", ErrInvalidSignature, discordTimestampHeader)
	}
	msg := append([]byte(vals[1]), body...)
	matched := false
	for _, key := range v.keys {
		matched = matched || ed25519.Verify(key, msg, sig)
	}
	if !matched {
		return Delivery{}, fmt.Errorf("%w: no configured public key verifies %s; check the application's public key",
			ErrInvalidSignature, discordSignatureHeader)
	}
	if err := checkTolerance(discordTimestampHeader, ts, v.now(), v.tolerance); err != nil {
		return Delivery{}, err
	}

	doc := &document{body: body, header: header}
	typ, err := doc.value(Field{JSON: "type"})
	if err != nil {
		return Delivery{}, err
	}
	// Interactions carry a token to answer them with; webhook events do not.
	if token, _ := doc.lookup("token"); token == nil {
		// Webhook events: PING (0) wants an empty 204; events carry no id.
		if typ == "0" {
			return Delivery{Reply: &Reply{Status: http.StatusNoContent}}, nil
		}
		return (&hmacVerifier{ids: []Field{{BodySHA256: true}}, types: []Field{{JSON: "event.type"}},
			occurred: []Field{{JSON: "event.timestamp"}}}).extract(doc)
	}
	// Interactions: PING (1) wants a PONG.
	if typ == "1" {
		return Delivery{Reply: jsonReply(map[string]int{"type": 1})}, nil
	}
	d, err := (&hmacVerifier{ids: []Field{{JSON: "id"}}, types: []Field{{JSON: "type"}}}).extract(doc)
	if err != nil {
		return Delivery{}, err
	}
	if name, ok := discordInteractionTypes[d.EventType]; ok {
		d.EventType = name
	}
	// A snowflake id holds its creation time: the interaction's time.
	if id, err := strconv.ParseUint(d.ID, 10, 64); err == nil && id>>22 > 0 {
		d.OccurredAt = time.UnixMilli(int64(id>>22) + discordEpochMillis).UTC()
	}
	return d, nil
}
