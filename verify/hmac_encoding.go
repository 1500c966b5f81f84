package verify

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"strings"
)

var hashes = map[string]func() hash.Hash{"sha1": sha1.New, "sha256": sha256.New, "sha512": sha512.New}

// signatureEncodings decode a received signature. base64url takes padded
// and unpadded forms: senders differ, and the length check that follows
// refuses truncations either way.
var signatureEncodings = map[string]struct {
	decode func(string) ([]byte, error)
	encode func([]byte) string
}{
	"hex":       {hex.DecodeString, hex.EncodeToString},
	"base64":    {base64.StdEncoding.DecodeString, base64.StdEncoding.EncodeToString},
	"base64url": {decodeBase64URL, base64.RawURLEncoding.EncodeToString},
}

func decodeBase64URL(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

// secretEncodings turn a configured secret into an HMAC key.
var secretEncodings = map[string]func(string) ([]byte, error){
	"raw":    func(s string) ([]byte, error) { return []byte(s), nil },
	"base64": base64.StdEncoding.DecodeString,
	"hex":    hex.DecodeString,
	"whsec":  standardKey,
}
