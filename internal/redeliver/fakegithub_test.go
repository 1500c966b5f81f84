package redeliver

import (
	"cmp"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// fakeGitHub is a real HTTP server speaking the shapes of GitHub's webhook
// deliveries API: list (newest first, cursor pagination through the Link
// header) and redeliver (202 Accepted), for repository and organisation
// hooks. It checks the bearer token and records what it was asked.
type fakeGitHub struct {
	srv   *httptest.Server
	token string
	// app is the GitHub App whose JWTs /app/ accepts: its id and public key.
	appID  int64
	appKey *rsa.PublicKey

	mu       sync.Mutex
	hooks    map[string][]attempt // "repos/{owner}/{repo}/hooks/{id}" or "orgs/{org}/hooks/{id}"
	pageSize int                  // GitHub may serve fewer than per_page; tests shrink pages to page
	// refuse maps an attempt id to the status its redelivery gets instead of 202.
	refuse map[int64]int
	// echoAuth makes 401 answers quote the Authorization header, as a
	// misbehaving proxy might, to prove errors do not carry the token.
	echoAuth bool
	lists    []listCall
	posts    []int64 // attempt ids whose redelivery was requested, in order
}

type listCall struct {
	hook    string
	perPage string
	cursor  string
}

// attempt is one delivery attempt of a GUID, as GitHub lists it.
type attempt struct {
	ID           int64
	GUID         string
	At           time.Time
	StatusCode   int // 0: GitHub could not connect or timed out
	Redelivery   bool
	Event        string
	Action       string
	RepoID       int64
	Installation int64
}

// hookDeliveryJSON is GitHub's list item, field for field.
type hookDeliveryJSON struct {
	ID             int64   `json:"id"`
	GUID           string  `json:"guid"`
	DeliveredAt    string  `json:"delivered_at"`
	Redelivery     bool    `json:"redelivery"`
	Duration       float64 `json:"duration"`
	Status         string  `json:"status"`
	StatusCode     int     `json:"status_code"`
	Event          string  `json:"event"`
	Action         *string `json:"action"`
	InstallationID *int64  `json:"installation_id"`
	RepositoryID   *int64  `json:"repository_id"`
}

func newFakeGitHub(t *testing.T, token string) *fakeGitHub {
	t.Helper()
	f := &fakeGitHub{token: token, hooks: map[string][]attempt{}, pageSize: 100, refuse: map[int64]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /repos/{owner}/{repo}/hooks/{id}/deliveries", f.list)
	mux.HandleFunc("GET /orgs/{org}/hooks/{id}/deliveries", f.list)
	mux.HandleFunc("POST /repos/{owner}/{repo}/hooks/{id}/deliveries/{delivery}/attempts", f.redeliver)
	mux.HandleFunc("POST /orgs/{org}/hooks/{id}/deliveries/{delivery}/attempts", f.redeliver)
	mux.HandleFunc("GET /app/hook/deliveries", f.list)
	mux.HandleFunc("POST /app/hook/deliveries/{delivery}/attempts", f.redeliver)
	f.srv = httptest.NewServer(f.authenticated(mux))
	t.Cleanup(f.srv.Close)
	return f
}

// URL is the API base, as Config.APIURL takes it.
func (f *fakeGitHub) URL() string { return f.srv.URL + "/" }

func (f *fakeGitHub) add(hook string, as ...attempt) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hooks[hook] = append(f.hooks[hook], as...)
}

func (f *fakeGitHub) setPageSize(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pageSize = n
}

func (f *fakeGitHub) refuseRedelivery(attemptID int64, status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refuse[attemptID] = status
}

func (f *fakeGitHub) listCalls() []listCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.lists)
}

func (f *fakeGitHub) redeliveries() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.posts)
}

func (f *fakeGitHub) authenticated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		if strings.HasPrefix(r.URL.Path, "/app/") {
			// GitHub's /app endpoints take only an App JWT.
			if err := f.checkAppJWT(strings.TrimPrefix(got, "Bearer ")); err != nil {
				writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "A JSON web token could not be decoded: " + err.Error()})
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if got != "Bearer "+f.token {
			msg := "Bad credentials"
			if f.echoAuth {
				msg += " (Authorization: " + got + ")"
			}
			writeJSON(w, http.StatusUnauthorized, map[string]string{"message": msg, "documentation_url": "https://docs.github.com/rest"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkAppJWT accepts what GitHub accepts: RS256 signed by the App's key,
// issued by the App's id, issued in the past and expiring at most 10
// minutes after it was issued.
func (f *fakeGitHub) checkAppJWT(token string) error {
	if f.appKey == nil {
		return errors.New("no app configured")
	}
	var claims jwt.RegisteredClaims
	_, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return f.appKey, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuedAt(), jwt.WithExpirationRequired(),
		jwt.WithIssuer(strconv.FormatInt(f.appID, 10)))
	if err != nil {
		return err
	}
	if claims.IssuedAt == nil || claims.ExpiresAt.Sub(claims.IssuedAt.Time) > 10*time.Minute {
		return errors.New("'Expiration time' claim ('exp') is too far in the future")
	}
	return nil
}

// appHook is the fake's key for a GitHub App's own hook.
const appHook = "app/hook"

func hookKey(r *http.Request) string {
	if strings.HasPrefix(r.URL.Path, "/app/") {
		return appHook
	}
	if org := r.PathValue("org"); org != "" {
		return "orgs/" + org + "/hooks/" + r.PathValue("id")
	}
	return "repos/" + r.PathValue("owner") + "/" + r.PathValue("repo") + "/hooks/" + r.PathValue("id")
}

func (f *fakeGitHub) list(w http.ResponseWriter, r *http.Request) {
	key := hookKey(r)
	q := r.URL.Query()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists = append(f.lists, listCall{hook: key, perPage: q.Get("per_page"), cursor: q.Get("cursor")})
	all, ok := f.hooks[key]
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
		return
	}
	// Newest first, as GitHub lists them.
	sorted := slices.Clone(all)
	slices.SortFunc(sorted, func(a, b attempt) int {
		if c := b.At.Compare(a.At); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	size := 30 // GitHub's default per_page
	if n, err := strconv.Atoi(q.Get("per_page")); err == nil && n > 0 {
		size = min(n, 100)
	}
	size = min(size, f.pageSize)

	// The cursor names the first attempt of the page, like GitHub's
	// opaque "v1_…" cursors.
	start := 0
	if c := q.Get("cursor"); c != "" {
		id, err := strconv.ParseInt(strings.TrimPrefix(c, "v1_"), 10, 64)
		start = slices.IndexFunc(sorted, func(a attempt) bool { return a.ID == id })
		if err != nil || start < 0 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Invalid cursor"})
			return
		}
	}
	end := min(start+size, len(sorted))
	if end < len(sorted) {
		next := fmt.Sprintf("%s/%s/deliveries?per_page=%d&cursor=v1_%d", f.srv.URL, key, size, sorted[end].ID)
		w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, next))
	}
	page := make([]hookDeliveryJSON, 0, end-start)
	for _, a := range sorted[start:end] {
		page = append(page, a.json())
	}
	writeJSON(w, http.StatusOK, page)
}

func (f *fakeGitHub) redeliver(w http.ResponseWriter, r *http.Request) {
	key := hookKey(r)
	id, err := strconv.ParseInt(r.PathValue("delivery"), 10, 64)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil || !slices.ContainsFunc(f.hooks[key], func(a attempt) bool { return a.ID == id }) {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	f.posts = append(f.posts, id)
	if status, ok := f.refuse[id]; ok {
		writeJSON(w, status, map[string]string{"message": "Server Error"})
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{})
}

func (a attempt) json() hookDeliveryJSON {
	status := "OK"
	switch {
	case a.StatusCode == 0:
		status = "timed out"
	case a.StatusCode >= 300:
		status = "Invalid HTTP Response: " + strconv.Itoa(a.StatusCode)
	}
	event := a.Event
	if event == "" {
		event = "push"
	}
	d := hookDeliveryJSON{
		ID: a.ID, GUID: a.GUID, DeliveredAt: a.At.UTC().Format(time.RFC3339),
		Redelivery: a.Redelivery, Duration: 0.27, Status: status, StatusCode: a.StatusCode, Event: event,
	}
	if a.Action != "" {
		d.Action = &a.Action
	}
	if a.RepoID != 0 {
		d.RepositoryID = &a.RepoID
	}
	if a.Installation != 0 {
		d.InstallationID = &a.Installation
	}
	return d
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
