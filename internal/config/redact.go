package config

import (
	"fmt"
	"strings"
)

// CheckRedactHeaders reports the first entry of a redact list
// (sources[].redact_headers) that is not a header name (an HTTP token:
// letters, digits and !#$%&'*+-.^_`|~). Its errors begin with the entry's
// index, for the caller to put the list's name before. ingest checks the
// lists it is given with it too.
func CheckRedactHeaders(names []string) error {
	for i, name := range names {
		if name == "" {
			return fmt.Errorf("[%d]: empty header name", i)
		}
		if !validHeaderName(name) {
			return fmt.Errorf("[%d]: %q is not a header name (letters, digits and !#$%%&'*+-.^_`|~ only)", i, name)
		}
	}
	return nil
}

func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
