package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/hookinbox/hookinbox/verify"
)

// issueCount is how many distinct GitHub issues the issues scenarios
// send events about: each body is its own (repository, number), the
// resource the shipped issue mirror upserts and processing locks. Enough
// that two of the batches processing runs at once rarely want the same
// issue, as on a busy organisation's hook; a busier single issue would
// serialise its deliveries, which is ordering doing its job, not what these
// scenarios measure.
const issueCount = 16_384

// issueRepos is how many repositories the issues are spread over.
const issueRepos = 32

// issueOwner is the organisation that owns repository number repo.
func issueOwner(repo int) string {
	return []string{"acme", "globex", "initech", "umbrella"}[repo%4]
}

// issueRepoName is repository number repo's name within its owner.
func issueRepoName(repo int) string { return fmt.Sprintf("service-%02d", repo) }

// issueOf is which repository and issue number body i is about.
func issueOf(i int) (repo, number int) { return i % issueRepos, 1 + i/issueRepos }

// issueResourceKey is the resource processing records for body i
// (handlers' "owner/repo#number").
func issueResourceKey(i int) string {
	repo, number := issueOf(i)
	return issueOwner(repo) + "/" + issueRepoName(repo) + "#" + strconv.Itoa(number)
}

var issueActions = []struct{ action, state string }{
	{"opened", "open"}, {"edited", "open"}, {"labeled", "open"}, {"assigned", "open"},
	{"closed", "closed"}, {"reopened", "open"},
}

// setupIssueRig is setupRig for the scenarios that send GitHub `issues`
// events: it also makes their bodies, and records the server in info.
func setupIssueRig(ctx context.Context, opts options, root string, progress func(string, ...any), info *runInfo) (*rig, []payload, error) {
	r, err := setupRig(ctx, opts, root, progress)
	if err != nil {
		return nil, nil, err
	}
	info.Database = r.pg.describe()
	issues, err := newIssuePayloads(opts.payloadMin, opts.payloadMax, benchSecret)
	if err != nil {
		r.close()
		return nil, nil, err
	}
	return r, issues, nil
}

// newIssuePayloads builds issueCount GitHub `issues` events, one per
// issue, with sizes spread evenly over [lo, hi] (the body text pads them),
// each signed once with the project's GitHub signer: a resent body under a
// new delivery id is a new event about the same issue, as when it is
// edited twice in one second.
func newIssuePayloads(lo, hi int, secret string) ([]payload, error) {
	signer, err := verify.NewSigner(verify.ProviderGitHub, secret)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(3, 4)) // the same bodies every run
	out := make([]payload, issueCount)
	for i := range out {
		size := lo + (hi-lo)*i/(issueCount-1)
		repo, number := issueOf(i)
		body, err := issueEvent(rng, repo, number, size)
		if err != nil {
			return nil, err
		}
		h, err := signer.Sign(body, verify.Message{ID: newGUID(rng), EventType: "issues"}, time.Now())
		if err != nil {
			return nil, err
		}
		out[i] = payload{body: body, signature: h.Get("X-Hub-Signature-256")}
	}
	return out, nil
}

// issueEvent is an `issues` event about issue number of repository repo,
// in the shape GitHub sends (the fields the mirror and the ordering read,
// and the usual URLs and users around them), padded to size bytes with
// the issue's text.
func issueEvent(rng *rand.Rand, repo, number, size int) ([]byte, error) {
	a := issueActions[rng.IntN(len(issueActions))]
	owner := issueOwner(repo)
	name := issueRepoName(repo)
	full := owner + "/" + name
	api, web := "https://api.github.com/repos/"+full, "https://github.com/"+full
	user := authors[rng.IntN(len(authors))]
	login := map[string]any{"login": user.Username, "id": 583231 + rng.IntN(1000), "type": "User",
		"html_url": "https://github.com/" + user.Username, "avatar_url": "https://avatars.githubusercontent.com/u/583231?v=4"}
	created := time.Date(2026, 11, 1+rng.IntN(28), rng.IntN(24), rng.IntN(60), rng.IntN(60), 0, time.UTC)
	issue := map[string]any{
		"url": fmt.Sprintf("%s/issues/%d", api, number), "html_url": fmt.Sprintf("%s/issues/%d", web, number),
		"comments_url": fmt.Sprintf("%s/issues/%d/comments", api, number),
		"id":           2011530112 + repo*100000 + number, "node_id": fmt.Sprintf("I_kwDOKfgQz8%07d", repo*100000+number),
		"number": number, "title": sentence(rng, 20+rng.IntN(50)), "user": login,
		"labels": []map[string]any{{"id": 6134521, "name": "bug", "color": "d73a4a", "default": true}},
		"state":  a.state, "locked": false, "assignees": []any{login}, "comments": rng.IntN(20),
		"created_at": created.Format(time.RFC3339), "updated_at": created.Add(time.Duration(rng.IntN(3600)) * time.Second).Format(time.RFC3339),
		"closed_at": nil, "author_association": "MEMBER", "body": "",
	}
	p := map[string]any{
		"action": a.action,
		"issue":  issue,
		"repository": map[string]any{
			"id": 704118223 + repo, "node_id": "R_kgDOKfgQzw", "name": name, "full_name": full, "private": true,
			"owner":    map[string]any{"login": owner, "id": 9919 + repo%4, "type": "Organization"},
			"html_url": web, "url": api, "issues_url": api + "/issues{/number}", "pulls_url": api + "/pulls{/number}",
			"default_branch": "main", "created_at": "2023-10-19T08:12:44Z", "pushed_at": "2026-11-30T08:40:11Z",
			"open_issues_count": 42, "visibility": "private",
		},
		"organization": map[string]any{"login": owner, "id": 9919 + repo%4, "url": "https://api.github.com/orgs/" + owner},
		"sender":       login,
	}
	body, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	if pad := size - len(body); pad > 0 {
		issue["body"] = sentence(rng, pad)
		if body, err = json.Marshal(p); err != nil {
			return nil, err
		}
	}
	return body, nil
}
