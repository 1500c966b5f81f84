// Package outbound holds the rules every request hookinbox makes to a
// user's service follows: redirects are answers, never followed, and a URL
// shown to anyone (an error, a log line, an attempt) has its credentials
// masked.
//
// A followed redirect turns a POST into a GET with no body, so a
// landing page's 200 would record a delivery nobody received; and it
// carries the configured headers (an API key, a signature) to whatever
// host the Location names.
package outbound

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// CheckRedirect is an http.Client's CheckRedirect that follows no
// redirect: the 3xx itself is the answer.
func CheckRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// IsHTTPURL reports whether raw is an absolute http or https URL with a
// host: the only URLs hookinbox sends to. Each configuration key that
// holds one is checked with it.
func IsHTTPURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// NoRedirects returns a copy of client (nil: http.DefaultClient's
// settings) that follows no redirect. The copy shares client's Transport,
// so its connections are reused.
func NoRedirects(client *http.Client) *http.Client {
	c := http.Client{}
	if client != nil {
		c = *client
	}
	c.CheckRedirect = CheckRedirect
	return &c
}

// IsRedirect reports whether status is a 3xx: an answer that points
// elsewhere instead of taking the request.
func IsRedirect(status int) bool { return status >= 300 && status < 400 }

// maxLocation bounds how much of a Location an error repeats.
const maxLocation = 256

// RedirectError describes a redirect answer for operators: where it
// pointed (masked), and what to do about it.
func RedirectError(status int, location string) string {
	where := "no Location"
	if location != "" {
		where = "Location " + truncate(MaskURL(location), maxLocation)
	}
	return fmt.Sprintf("HTTP %d redirect (%s): redirects are not followed; set the URL to the address that accepts the POST itself", status, where)
}

// masked replaces a secret.
const masked = "***"

// MaskURL returns raw with its credentials replaced by ***: the userinfo,
// every query value and any query part without one (an api_key, a token, a
// signature: a URL's query is where services put them, and the names alone
// say enough to tell which URL it is), the fragment, and every path
// segment. Slack's, Discord's and many a self-made webhook URL carry their
// secret in the path, and no rule tells a token from a name
// (/services/T0123ABCD/B0123ABCD/… or /hooks/s3cr3t-t0ken), so only the
// scheme and host are kept: the destination's configured name says which
// URL it is. Text that does not parse as a URL is masked up to its last
// '@', from its first '?' or '#', and after the host, so a malformed URL
// leaks no more than a good one.
func MaskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" {
		return maskUnparsed(raw)
	}
	hadUser := u.User != nil
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = maskQuery(u.RawQuery)
	}
	if u.Fragment != "" {
		u.Fragment, u.RawFragment = masked, ""
	}
	if p := maskPath(u.EscapedPath()); p != u.EscapedPath() {
		// Set in its escaped form: url.URL would escape the stars.
		u.RawPath = p
		u.Path, _ = url.PathUnescape(p)
	}
	s := u.String()
	if hadUser {
		// url.User would escape the stars.
		s = strings.Replace(s, "//", "//"+masked+"@", 1)
	}
	return s
}

// maskUnparsed masks what MaskURL cannot parse.
func maskUnparsed(raw string) string {
	rest, scheme := raw, ""
	if i := strings.Index(raw, "://"); i >= 0 {
		scheme, rest = raw[:i+3], raw[i+3:]
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = masked + "@" + rest[i+1:]
	}
	tail := ""
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest, tail = rest[:i], rest[i:i+1]+masked
	}
	if i := strings.Index(rest, "/"); i >= 0 {
		rest = rest[:i] + maskPath(rest[i:])
	}
	return scheme + rest + tail
}

// maskQuery keeps each parameter's name and masks its value, in order
// (url.Values would reorder them); a part with no value is masked whole.
func maskQuery(q string) string {
	parts := strings.Split(q, "&")
	for i, p := range parts {
		name, _, hasValue := strings.Cut(p, "=")
		switch {
		case hasValue:
			parts[i] = name + "=" + masked
		case p != "":
			parts[i] = masked
		}
	}
	return strings.Join(parts, "&")
}

// maskPath masks every non-empty segment of p, keeping the slashes.
func maskPath(p string) string {
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		if seg != "" {
			segs[i] = masked
		}
	}
	return strings.Join(segs, "/")
}

// MaskError returns err with the URL of a failed request masked in its
// text: Go's client names the request's URL in its errors (Post "…": dial
// tcp …), query and all. errors.Is and errors.As see err as before.
func MaskError(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	masked := &url.Error{Op: ue.Op, URL: MaskURL(ue.URL), Err: ue.Err}
	return &maskedError{msg: strings.Replace(err.Error(), ue.Error(), masked.Error(), 1), err: err}
}

type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
