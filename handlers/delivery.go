package handlers

import (
	"net/http"
	"time"

	jsonv1 "github.com/go-json-experiment/json/v1"
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
	Headers    http.Header // canonical names: Headers.Get finds a Kafka header whatever case its producer sent
	Payload    []byte      // the raw body, byte for byte

	// GitHub is go-github's typed event (e.g. *github.IssuesEvent) for a
	// GitHub delivery whose event type go-github knows; nil otherwise, and
	// nil when every handler the delivery matched is PayloadOnly.
	GitHub any

	// gitHub is the decoded gitHubPayload, shared by copies of the
	// delivery; nil until decodeGitHub first runs.
	gitHub *gitHubDecoded
}

// parseGitHub fills d.GitHub. An event type go-github does not know is not
// an error: handlers for it can still read Payload.
//
// It is github.ParseWebHook with encoding/json's v1 semantics run on the
// json/v2 engine (go-json-experiment/json/v1, what encoding/json becomes
// under GOEXPERIMENT=jsonv2), which is faster, and ParseWebHook was a large
// share of a default serve's CPU under steady GitHub load (bench/README.md,
// Design decisions, "Payloads and JSON"). TestParseGitHubMatchesGoGitHub
// holds the two to one result.
func (d *Delivery) parseGitHub() {
	if d.Provider != "github" || d.GitHub != nil {
		return
	}
	ev := github.EventForType(d.EventType)
	if ev != nil && jsonv1.Unmarshal(d.Payload, ev) == nil {
		d.GitHub = ev
	}
}

// gitHubPayload is what hookinbox itself reads from a GitHub payload: the
// resource and its ordering time (resourceOf) and an issue's or pull
// request's state (GitHubFields, which the shipped mirror reads). Decoding
// these alone costs a fraction of go-github's typed parse, which was a large
// share of a default serve's CPU under steady GitHub load (bench/README.md,
// Design decisions, "Payloads and JSON"), so the typed event is parsed only
// for a handler that reads it (Registration.PayloadOnly). The types are
// go-github's where it has one (Timestamp's two forms) and pointers where a
// null must read as absent, so both readings agree:
// TestGitHubTypedResourceMatchesTheJSONPath, TestGitHubFieldsMatchGoGitHub
// and handlers/github's TestIssueMirrorRowMatchesGoGitHub.
type gitHubPayload struct {
	Action     string `json:"action"`
	Repository *struct {
		FullName string            `json:"full_name"`
		PushedAt *github.Timestamp `json:"pushed_at"`
	} `json:"repository"`
	Issue       *gitHubItem `json:"issue"`
	PullRequest *gitHubItem `json:"pull_request"`
	Ref         string      `json:"ref"`
	HeadCommit  *struct {
		Timestamp *github.Timestamp `json:"timestamp"`
	} `json:"head_commit"`
}

// gitHubItem is an issue or a pull request in gitHubPayload.
type gitHubItem struct {
	Number    int               `json:"number"`
	State     string            `json:"state"`
	Title     string            `json:"title"`
	UpdatedAt *github.Timestamp `json:"updated_at"`
	Merged    bool              `json:"merged"`
}

// repo is the repository's full name, "" when absent.
func (f *gitHubPayload) repo() string {
	if f.Repository == nil {
		return ""
	}
	return f.Repository.FullName
}

// gitHubDecoded is a delivery's decoded gitHubPayload; ok is false when the
// payload is not JSON of that shape.
type gitHubDecoded struct {
	fields gitHubPayload
	ok     bool
}

// decodeGitHub decodes d's payload into gitHubPayload once, with
// encoding/json's v1 semantics (as go-github's parse) on the json/v2
// engine. ok is false when the payload is not JSON of that shape.
func (d *Delivery) decodeGitHub() (*gitHubPayload, bool) {
	if d.gitHub == nil {
		d.gitHub = new(gitHubDecoded)
		d.gitHub.ok = jsonv1.Unmarshal(d.Payload, &d.gitHub.fields) == nil
	}
	return &d.gitHub.fields, d.gitHub.ok
}

// GitHubFields are the few fields of a GitHub delivery's payload that
// hookinbox reads itself to order the delivery (Event.Resource). They are
// decoded once per delivery, so a handler that needs no more than these reads
// them at no cost of its own, where go-github's typed event (Delivery.GitHub)
// is a full parse (bench/README.md, Design decisions, "Payloads and JSON").
// Such a handler is PayloadOnly, and spares the delivery that parse
// altogether.
type GitHubFields struct {
	Action string // the event's action; "" when it has none
	Repo   string // repository.full_name; "" when absent
	// Issue and PullRequest are the payload's issue and pull_request; nil
	// when absent. An issue_comment on a pull request has an Issue.
	Issue, PullRequest *GitHubIssue
}

// GitHubIssue is an issue or a pull request in GitHubFields.
type GitHubIssue struct {
	Number    int
	State     string // as the payload says: "open", "closed"
	Title     string
	UpdatedAt time.Time // zero when the payload has none
	Merged    bool      // a pull request's merged
}

// GitHubFields reads d's GitHubFields, with encoding/json's v1 semantics
// as go-github's parse: a payload that go-github parses gives the same
// values as its typed event. ok is false when the payload is not JSON of
// that shape (a field of another type), which go-github refuses too.
func (d *Delivery) GitHubFields() (f GitHubFields, ok bool) {
	p, ok := d.decodeGitHub()
	if !ok {
		return f, false
	}
	f = GitHubFields{Action: p.Action, Repo: p.repo(), Issue: p.Issue.exported(), PullRequest: p.PullRequest.exported()}
	return f, true
}

// exported is i as GitHubIssue; nil when i is.
func (i *gitHubItem) exported() *GitHubIssue {
	if i == nil {
		return nil
	}
	return &GitHubIssue{Number: i.Number, State: i.State, Title: i.Title, UpdatedAt: timeOf(i.UpdatedAt), Merged: i.Merged}
}

// timeOf is t's time, zero when t is nil.
func timeOf(t *github.Timestamp) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}
