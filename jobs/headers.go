package jobs

import (
	"net/http"
	"net/textproto"
)

// canonicalHeaders gives handlers a stored delivery's headers under
// canonical names, so that Headers.Get finds them: a Kafka delivery keeps
// its names as the producer spelled them ("event_id"), which Get
// ("Event_id") would miss. h is returned as it is when every name is
// canonical already, as a webhook's always are.
func canonicalHeaders(h http.Header) http.Header {
	for k := range h {
		if textproto.CanonicalMIMEHeaderKey(k) != k {
			return recanonicalize(h)
		}
	}
	return h
}

func recanonicalize(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, vs := range h {
		ck := textproto.CanonicalMIMEHeaderKey(k)
		out[ck] = append(out[ck], vs...)
	}
	return out
}
