package destination

import (
	"testing"

	"github.com/hookinbox/hookinbox/internal/config"
)

// BenchmarkRouteFilterAndTransform is what a typical route costs one send:
// its filter in the outbox, then its filter again and its transform at
// send time (each parses the body once), over the shipped GitHub issues
// sample.
//
//	go test ./internal/destination -run '^$' -bench RouteFilterAndTransform -benchmem
func BenchmarkRouteFilterAndTransform(b *testing.B) {
	x, err := compileRoute(config.Route{
		Filter:    `body.action in ["opened", "reopened"] && body.issue.labels.exists(l, l.name == "bug")`,
		Transform: `{"text": "Bug: " + body.issue.title + " " + body.issue.html_url}`,
	})
	if err != nil {
		b.Fatal(err)
	}
	body := sampleB(b)
	b.ReportAllocs()
	for b.Loop() {
		enqueue, send := inputOf("github", "issues", body), inputOf("github", "issues", body)
		if ok, err := x.match(&enqueue); !ok || err != nil {
			b.Fatal(ok, err)
		}
		if ok, err := x.match(&send); !ok || err != nil {
			b.Fatal(ok, err)
		}
		if _, _, err := x.apply(&send); err != nil {
			b.Fatal(err)
		}
	}
}
