package handlers

import (
	"net/http"
	"time"

	"github.com/google/go-github/v60/github"
)

// Delivery is one stored inbox row, as handlers see it.
type Delivery struct {
	InboxID    int64
	Source     string
	Provider   string
	DeliveryID string
	EventType  string
	OccurredAt time.Time // zero when the provider did not say
	ReceivedAt time.Time
	Headers    http.Header
	Payload    []byte // the raw body, byte for byte

	// GitHub is go-github's typed event (e.g. *github.IssuesEvent) for a
	// GitHub delivery whose event type go-github knows; nil otherwise.
	GitHub any
}

// parseGitHub fills d.GitHub. An event type go-github does not know is not
// an error: handlers for it can still read Payload.
func (d *Delivery) parseGitHub() {
	if d.Provider != "github" || d.GitHub != nil {
		return
	}
	if ev, err := github.ParseWebHook(d.EventType, d.Payload); err == nil {
		d.GitHub = ev
	}
}
