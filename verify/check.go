package verify

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// headerValue returns the first value of the named header. It falls back to
// a case-insensitive scan because callers that fill http.Header by map
// assignment (adapters from other HTTP stacks) may leave keys uncanonical,
// and a lowercase "webhook-id" must not read as missing.
func headerValue(h http.Header, name string) string {
	if v := h.Get(name); v != "" {
		return v
	}
	for k, vs := range h {
		if len(vs) > 0 && strings.EqualFold(k, name) {
			return vs[0]
		}
	}
	return ""
}

// requiredHeaders returns the named headers' values in order, or
// ErrMissingHeader naming the first one absent.
func requiredHeaders(h http.Header, names ...string) ([]string, error) {
	vals := make([]string, len(names))
	for i, name := range names {
		if vals[i] = headerValue(h, name); vals[i] == "" {
			return nil, fmt.Errorf("%w: %s", ErrMissingHeader, name)
		}
	}
	return vals, nil
}

// checkID enforces what we store as a delivery id or event type: 1 to
// MaxIDLength bytes of UTF-8 without control characters. PostgreSQL text
// cannot hold NUL, and the other control characters only ever mean a
// broken or hostile sender. The value itself is never echoed: it is
// attacker-controlled and may be unprintable.
func checkID(field, v string) error {
	switch {
	case v == "":
		return fmt.Errorf("%w: %s is empty", ErrInvalidPayload, field)
	case len(v) > MaxIDLength:
		return fmt.Errorf("%w: %s is %d bytes long (max %d)", ErrInvalidPayload, field, len(v), MaxIDLength)
	case !utf8.ValidString(v) || strings.ContainsRune(v, utf8.RuneError):
		// encoding/json turns invalid UTF-8 (and lone surrogate escapes)
		// inside a JSON string into U+FFFD: an id holding it is not the id
		// the sender wrote, so it must not become a dedup key.
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalidPayload, field)
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return fmt.Errorf("%w: %s contains a control character", ErrInvalidPayload, field)
	}
	return nil
}

// parseUnixSeconds accepts only the canonical decimal form (no sign, no
// leading zeros, no spaces). Providers sign the timestamp as text but
// reference libraries recompute it from the parsed integer, so accepting
// "+17…" or "017…" would make the text we verify differ from the text the
// sender signed.
func parseUnixSeconds(s string) (int64, bool) {
	ts, err := strconv.ParseInt(s, 10, 64)
	if err != nil || ts < 0 || strconv.FormatInt(ts, 10) != s {
		return 0, false
	}
	return ts, true
}

// maxSkew bounds how far from now a timestamp is taken at face value
// (about 136 years). Beyond it, time.Unix and time.Sub would overflow or
// saturate and a far-future timestamp could read as far-past, or as a
// negative duration, in the error message.
const maxSkew = 1 << 32

// checkTolerance refuses a signed timestamp more than tol away from now in
// either direction. Only a past bound stops replays; the future bound stops
// a sender with a skewed clock (or a leaked signing oracle) from minting
// signatures that stay valid for a long time.
func checkTolerance(header string, ts int64, now time.Time, tol time.Duration) error {
	nowUnix := now.Unix()
	ts = max(min(ts, nowUnix+maxSkew), nowUnix-maxSkew)
	d := now.Sub(time.Unix(ts, 0))
	switch {
	case d > tol:
		return fmt.Errorf("%w: %s is %s in the past (tolerance %s); check the sender's clock or whether this is a replay",
			ErrTimestampOutOfTolerance, header, ceilSecond(d), tol)
	case d < -tol:
		return fmt.Errorf("%w: %s is %s in the future (tolerance %s); check the sender's clock",
			ErrTimestampOutOfTolerance, header, ceilSecond(-d), tol)
	}
	return nil
}

// ceilSecond rounds a positive d up to whole seconds, so a request just
// past a whole-second tolerance never reads as "5m0s in the past
// (tolerance 5m0s)".
func ceilSecond(d time.Duration) time.Duration {
	if t := d.Truncate(time.Second); t != d {
		return t + time.Second
	}
	return d
}

// signHMAC returns HMAC-SHA256 of the concatenated parts under key.
func signHMAC(key []byte, parts ...[]byte) []byte {
	mac := hmac.New(sha256.New, key)
	for _, p := range parts {
		mac.Write(p)
	}
	return mac.Sum(nil)
}

// anyEqual reports whether any received signature equals any expected one,
// comparing in constant time per pair.
func anyEqual(expected, received [][]byte) bool {
	for _, e := range expected {
		for _, r := range received {
			if hmac.Equal(e, r) {
				return true
			}
		}
	}
	return false
}

// trimJSONSpace strips the whitespace JSON allows before a value.
func trimJSONSpace(b []byte) []byte {
	return bytes.TrimLeft(b, " \t\r\n")
}

// signTime is the unix time a signer puts on the wire: now, or the current
// time when now is zero. Verifiers accept no negative timestamps, so a
// signer must not produce one.
func signTime(now time.Time) (int64, error) {
	if now.IsZero() {
		now = time.Now()
	}
	if now.Unix() < 0 {
		return 0, fmt.Errorf("cannot sign a time before 1970: %s", now)
	}
	return now.Unix(), nil
}

// headerValues returns every value of the named header, looked up like
// headerValue.
func headerValues(h http.Header, name string) []string {
	if vs := h.Values(name); len(vs) > 0 {
		return nonEmpty(vs)
	}
	for k, vs := range h {
		if strings.EqualFold(k, name) {
			return nonEmpty(vs)
		}
	}
	return nil
}

func nonEmpty(vs []string) []string {
	var out []string
	for _, v := range vs {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}
