package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/verify"
)

// benchSecret is the GitHub source's signing secret in the generated config.
const benchSecret = "hookinbox-bench-secret"

// minPayload is about the smallest push event with one commit.
const minPayload = 1500

// payloadCount is how many distinct bodies a run sends: enough to spread
// sizes across the range, few enough to sign each once.
const payloadCount = 64

// payload is one push body and the headers GitHub would send with it.
type payload struct {
	body      []byte
	sha256Hex string
	// signature is X-Hub-Signature-256. GitHub signs the body only, not the
	// delivery GUID, so one signature serves every delivery of this body
	// and the load generator spends no CPU signing (it shares the CPUs with
	// the service).
	signature string
	header    http.Header // as verify's signer made it, for pgbench's stored headers
}

// newPayloads builds realistic push events with sizes spread evenly over
// [lo, hi], signed with the project's own GitHub signer.
func newPayloads(lo, hi int, secret string) ([]payload, error) {
	signer, err := verify.NewSigner(verify.ProviderGitHub, secret)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(1, 2)) // the same bodies every run
	out := make([]payload, payloadCount)
	for i := range out {
		size := lo
		if payloadCount > 1 {
			size = lo + (hi-lo)*i/(payloadCount-1)
		}
		body, err := pushEvent(rng, size)
		if err != nil {
			return nil, err
		}
		h, err := signer.Sign(body, verify.Message{ID: newGUID(rng), EventType: "push"}, time.Now())
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(body)
		out[i] = payload{body: body, sha256Hex: hex.EncodeToString(sum[:]), signature: h.Get("X-Hub-Signature-256"), header: h}
	}
	return out, nil
}

type gitUser struct {
	Name     string `json:"name"`
	Email    string `json:"email"`
	Username string `json:"username"`
}

type commit struct {
	ID        string   `json:"id"`
	TreeID    string   `json:"tree_id"`
	Distinct  bool     `json:"distinct"`
	Message   string   `json:"message"`
	Timestamp string   `json:"timestamp"`
	URL       string   `json:"url"`
	Author    gitUser  `json:"author"`
	Committer gitUser  `json:"committer"`
	Added     []string `json:"added"`
	Removed   []string `json:"removed"`
	Modified  []string `json:"modified"`
}

type pushBody struct {
	Ref        string         `json:"ref"`
	Before     string         `json:"before"`
	After      string         `json:"after"`
	Created    bool           `json:"created"`
	Deleted    bool           `json:"deleted"`
	Forced     bool           `json:"forced"`
	Compare    string         `json:"compare"`
	Commits    []commit       `json:"commits"`
	HeadCommit commit         `json:"head_commit"`
	Repository map[string]any `json:"repository"`
	Pusher     map[string]any `json:"pusher"`
	Sender     map[string]any `json:"sender"`
}

var (
	authors = []gitUser{
		{"Ada Lovelace", "ada@example.com", "ada"},
		{"Grace Hopper", "grace@example.com", "grace"},
		{"Edsger Dijkstra", "edsger@example.com", "ewd"},
	}
	files = []string{"checkout/rounding.go", "checkout/rounding_test.go", "cart/cart.go", "api/orders.go",
		"web/static/app.js", "README.md", "go.mod", "go.sum", "internal/tax/vat.go", "db/migrations/0042_orders.sql"}
	words = strings.Fields("fix add remove update checkout rounding currency order cart tax refund handle " +
		"edge case zero decimal retry idempotent webhook test docs bump dependency refactor")
)

// pushEvent is a GitHub push with as many commits as fit in size bytes,
// padded to exactly size with the head commit's message. It contains no
// backslash, so pgbench can pass it as bytea text unchanged.
func pushEvent(rng *rand.Rand, size int) ([]byte, error) {
	repo := map[string]any{
		"id": 704118223, "node_id": "R_kgDOKfgQzw", "name": "webshop", "full_name": "acme/webshop", "private": true,
		"owner":    map[string]any{"login": "acme", "id": 9919, "type": "Organization"},
		"html_url": "https://github.com/acme/webshop", "default_branch": "main", "pushed_at": 1795939964,
	}
	p := pushBody{
		Ref: "refs/heads/main", Before: sha(rng), After: sha(rng),
		Repository: repo,
		Pusher:     map[string]any{"name": "ada", "email": "ada@example.com"},
		Sender:     map[string]any{"login": "ada", "id": 583231, "type": "User"},
	}
	p.Compare = "https://github.com/acme/webshop/compare/" + p.Before[:12] + "..." + p.After[:12]
	p.HeadCommit = newCommit(rng)
	p.Commits = []commit{p.HeadCommit}
	body, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	for {
		c := newCommit(rng)
		p.Commits = append(p.Commits, c)
		next, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		if len(next) > size {
			p.Commits = p.Commits[:len(p.Commits)-1]
			break
		}
		body = next
	}
	if pad := size - len(body); pad > 0 {
		p.HeadCommit.Message += " " + sentence(rng, pad-1)
		if body, err = json.Marshal(p); err != nil {
			return nil, err
		}
	}
	if len(body) > size+1 || bytes.ContainsRune(body, '\\') {
		return nil, fmt.Errorf("push payload of %d bytes for size %d", len(body), size)
	}
	return body, nil
}

func newCommit(rng *rand.Rand) commit {
	id := sha(rng)
	a := authors[rng.IntN(len(authors))]
	modified := make([]string, 1+rng.IntN(4))
	for i := range modified {
		modified[i] = files[rng.IntN(len(files))]
	}
	return commit{
		ID: id, TreeID: sha(rng), Distinct: true,
		Message:   sentence(rng, 30+rng.IntN(90)),
		Timestamp: time.Date(2026, 11, 30, 9, rng.IntN(60), rng.IntN(60), 0, time.FixedZone("", 3600)).Format(time.RFC3339),
		URL:       "https://github.com/acme/webshop/commit/" + id,
		Author:    a, Committer: a,
		Added: []string{}, Removed: []string{}, Modified: modified,
	}
}

// sentence is n bytes of commit-message words.
func sentence(rng *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	return b.String()[:n]
}

func sha(rng *rand.Rand) string {
	var b [20]byte
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return hex.EncodeToString(b[:])
}

// newGUID formats 16 random bytes as a version-4 UUID, the shape of
// GitHub's X-GitHub-Delivery.
func newGUID(rng *rand.Rand) string {
	var u [16]byte
	a, b := rng.Uint64(), rng.Uint64()
	for i := range 8 {
		u[i], u[8+i] = byte(a>>(8*i)), byte(b>>(8*i))
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
