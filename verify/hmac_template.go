package verify

import (
	"fmt"
	"strings"
)

// Template placeholders.
const (
	phBody      = "body"
	phID        = "id"
	phTimestamp = "timestamp"
	phURL       = "url"
	phMethod    = "method"
)

// segment is a piece of a parsed signed_content template: literal text, or
// a placeholder.
type segment struct {
	literal     string
	placeholder string
}

// parseTemplate splits a signed_content template. Every '{' opens a known
// placeholder; {body} appears exactly once, so a scheme never signs
// something other than the body.
func parseTemplate(tmpl string) ([]segment, error) {
	var segs []segment
	bodies := 0
	for rest := tmpl; rest != ""; {
		i := strings.IndexAny(rest, "{}")
		if i < 0 {
			segs = append(segs, segment{literal: rest})
			break
		}
		if i > 0 {
			segs = append(segs, segment{literal: rest[:i]})
		}
		if rest[i] == '}' {
			return nil, fmt.Errorf("%q has a '}' that closes nothing", tmpl)
		}
		end := strings.IndexByte(rest[i:], '}')
		if end < 0 {
			return nil, fmt.Errorf("%q has a '{' that is not closed", tmpl)
		}
		name := rest[i+1 : i+end]
		switch name {
		case phBody:
			bodies++
		case phID, phTimestamp, phURL, phMethod:
		default:
			return nil, fmt.Errorf("unknown placeholder {%s} (want {body}, {id}, {timestamp}, {url} or {method})", name)
		}
		segs = append(segs, segment{placeholder: name})
		rest = rest[i+end+1:]
	}
	if bodies != 1 {
		return nil, fmt.Errorf("%q must hold {body} exactly once", tmpl)
	}
	return segs, nil
}

func (s HMACScheme) signs(placeholder string) bool {
	segs, _ := parseTemplate(s.SignedContent)
	for _, seg := range segs {
		if seg.placeholder == placeholder {
			return true
		}
	}
	return false
}
