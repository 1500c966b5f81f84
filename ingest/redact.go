package ingest

import (
	"net/http"
	"strings"

	"github.com/hookinbox/hookinbox/verify"
)

// A stored delivery is shown in the admin API and the console and kept for
// weeks: a header holding a secret as it is (a bearer token, GitLab's
// X-Gitlab-Token) would let anyone who reads it send as the provider. Such
// headers are read by verification and then dropped, before anything is
// stored. storedHeaders drops the generic credentials on every path into
// the inbox; the per-source list is applied on receipt (redact).

// redactedHeaders is the set of headers a source never stores, lower-cased:
// its provider's secret headers and the source's own list.
func redactedHeaders(provider string, extra []string) map[string]bool {
	m := map[string]bool{}
	for _, name := range append(verify.SecretHeaders(provider), extra...) {
		m[strings.ToLower(name)] = true
	}
	return m
}

// redact removes the source's redacted headers from h, a request's own
// copy, once verification has read them.
func (src Source) redact(h http.Header) {
	if len(src.redacted) == 0 {
		return
	}
	for name := range h {
		if src.redacted[strings.ToLower(name)] {
			delete(h, name)
		}
	}
}
