package admin

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// hostAllow decides which Host headers the admin listener answers. A page
// on a name the attacker's DNS points at 127.0.0.1 (DNS rebinding) is
// same-origin with itself, so neither the cross-site check nor a
// loopback bind stops it from reading or acting: only refusing a Host
// that is none of ours does. IP literals pass (a rebinding page is always
// on a name), as do localhost, the listen address's own name and the names
// admin.hosts lists ("*.example.com" matches its subdomains).
type hostAllow struct {
	exact    map[string]bool
	suffixes []string // ".example.com" for "*.example.com"
}

func newHostAllow(listen string, hosts []string) hostAllow {
	a := hostAllow{exact: map[string]bool{"localhost": true}}
	if h, _, err := net.SplitHostPort(listen); err == nil && h != "" {
		a.exact[strings.ToLower(h)] = true
	}
	for _, h := range hosts {
		h = strings.ToLower(h)
		if suffix, ok := strings.CutPrefix(h, "*"); ok {
			a.suffixes = append(a.suffixes, suffix)
			continue
		}
		a.exact[h] = true
	}
	return a
}

func (a hostAllow) allows(hostHeader string) bool {
	host := hostHeader
	if h, _, err := net.SplitHostPort(hostHeader); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if host == "" || net.ParseIP(host) != nil || a.exact[host] {
		return true
	}
	for _, s := range a.suffixes {
		if strings.HasSuffix(host, s) && len(host) > len(s) {
			return true
		}
	}
	return false
}

// checkHostName accepts a DNS name, or "*." and one: what a Host header
// carries without its port.
func checkHostName(h string) error {
	name := strings.TrimPrefix(h, "*.")
	switch {
	case name == "" || strings.ContainsAny(name, "*/:@ ") || strings.HasPrefix(name, ".") || strings.HasSuffix(name, "."):
		return errors.New(`is not a host name (want "admin.example.com" or "*.example.com", no scheme or port; IP addresses are always allowed)`)
	}
	return nil
}

// CodeHostNotAllowed is the error code of a request to a Host the admin
// listener does not answer.
const CodeHostNotAllowed = "host_not_allowed"

// maxShownHost bounds how much of a refused Host the error repeats.
const maxShownHost = 100

// refuseForeignHost answers 421 Misdirected Request to a request whose
// Host is not ours, before authentication and before any route. It reads
// the Host header itself: Fiber's Hostname would take X-Forwarded-Host,
// which the rebinding page can set.
func (s *Server) refuseForeignHost(c *fiber.Ctx) error {
	host := string(c.Request().Host())
	if s.hosts.allows(host) {
		return c.Next()
	}
	if len(host) > maxShownHost {
		host = host[:maxShownHost]
	}
	return &apiError{http.StatusMisdirectedRequest, CodeHostNotAllowed, fmt.Sprintf(
		"the admin listener does not answer to Host %q; if that name is yours, add it to admin.hosts (HOOKINBOX_ADMIN_HOSTS)", host)}
}
