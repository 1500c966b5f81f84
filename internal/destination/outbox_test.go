package destination

import "testing"

// The outbox never reads go-github's typed event, so a delivery that only
// routes match is not parsed into one: the parse was the largest single
// cost of a forwarded GitHub delivery in serve's profile (bench/README.md,
// The whole path).
func TestOutboxSparesTheTypedGitHubParse(t *testing.T) {
	t.Parallel()
	reg := (&Service{}).outbox("github", []string{"issues"})
	if !reg.PayloadOnly {
		t.Fatal("the outbox's registration is not PayloadOnly: every routed GitHub delivery pays go-github's typed parse")
	}
	if !reg.Batch {
		t.Fatal("the outbox's registration is not Batch: each delivery would take a transaction of its own")
	}
}
