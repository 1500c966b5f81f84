package drills

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
)

// TestRollingDeployAddsADestination deploys, on one database, a
// configuration that adds a destination (github's forward_url:
// github-forward) next to a process of the old one, as a rolling deploy
// does. Both take signed traffic; then the old process is killed with
// SIGKILL and restarted, still without the destination, while
// github-forward has sends unfinished. Besides the audit: every github
// delivery sent after the new process reported ready reaches
// github-forward exactly once, whichever process received it; no send is
// failed, by the restart or otherwise; and no process reports a
// destination as unknown.
func TestRollingDeployAddsADestination(t *testing.T) {
	if !*longForm {
		t.Parallel()
	}
	var (
		rate     = pick(30.0, 60.0)
		phase    = pick(2*time.Second, 15*time.Second) // old alone; both, before each restart; after the last
		restarts = pick(1, 3)
		backlog  = pick(10, 40) // github-forward sends unfinished, at least, when old restarts
	)
	githubForward := config.ForwardDestination("github")
	b := setup(t, setupOpts{})
	old := b.start(t, "old")
	newCfg := b.cfg
	newCfg.GitHubForward = true

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Until new is ready everything goes to old; then the two take turns,
	// as a load balancer spreads requests. A retry takes the next turn, so
	// requests old loses while it is down land on new.
	var (
		newer atomic.Pointer[proc]
		turn  atomic.Uint64
	)
	target := func() string {
		if p := newer.Load(); p != nil && turn.Add(1)%2 == 0 {
			return p.URL()
		}
		return old.URL()
	}
	stopLoad := make(chan struct{})
	var stopOnce sync.Once
	endLoad := func() { stopOnce.Do(func() { close(stopLoad) }) }
	defer endLoad()
	loaded := make(chan float64, 1)
	loadStart := time.Now()
	go func() {
		loaded <- b.gen.load(ctx, loadOpts{
			Rate: rate, Concurrency: 128, DupFraction: 0.1, Burst: 4,
			Target: target, Next: func(n int) delivery { return newDelivery(b.run, n) }, Until: stopLoad,
		})
	}()
	watch := &destinationWatch{}
	watchCtx, endWatch := context.WithCancel(ctx)
	defer endWatch()
	var wg sync.WaitGroup
	wg.Go(func() {
		watch.loop(watchCtx, 200*time.Millisecond, map[string]func() string{
			"old": old.AdminURL,
			"new": func() string {
				if p := newer.Load(); p != nil {
					return p.AdminURL()
				}
				return ""
			},
		})
	})

	time.Sleep(phase) // old alone takes traffic
	newStarted := time.Now()
	nw := startProc(t, "new", newCfg, "--migrate=false")
	newReady := time.Now()
	newer.Store(nw)
	t.Logf("new reported ready %s after it started", newReady.Sub(newStarted).Round(time.Millisecond))

	res := &auditResult{Drill: "rolling deploy (adds a destination)"}
	var lastReturn time.Time
	unfinished := 0 // github-forward sends unfinished when old restarted, summed
	for i := range restarts {
		time.Sleep(phase) // both take traffic
		// A paused destination claims nothing, so its sends are certainly
		// unfinished when old starts again: the backlog of a destination
		// old does not have.
		adminPost(t, nw, "/admin/destinations/"+githubForward+"/pause", fmt.Sprintf("%s-pause-%d", b.run, i))
		var n int
		if !waitFor(ctx, 30*time.Second, 50*time.Millisecond, func() bool {
			n = countSends(t, b.pool, githubForward, "waiting", "pending", "held")
			return n >= backlog
		}) {
			t.Fatalf("restart %d: %d %s sends unfinished after 30 s; want at least %d", i+1, n, githubForward, backlog)
		}
		old.kill()
		if err := old.restart(); err != nil {
			t.Fatal(err)
		}
		lastReturn = time.Now()
		after := countSends(t, b.pool, githubForward, "waiting", "pending", "held")
		unfinished += after
		t.Logf("restart %d: old killed with %d %s sends unfinished; ready again with %d unfinished", i+1, n, githubForward, after)
		if failed := countSends(t, b.pool, "", "failed"); failed > 0 {
			res.problem("restart %d: %d sends failed once old started again", i+1, failed)
		}
		// Old lists the destination it does not have as another
		// process's, not as unknown.
		sts, err := destinationStatuses(ctx, old.AdminURL())
		if err != nil {
			t.Fatalf("restart %d: old's destinations: %v", i+1, err)
		}
		if st, _ := findStatus(sts, githubForward); st.State != destination.StateElsewhere {
			res.problem("restart %d: old shows %s as %q; want %s", i+1, githubForward, st.State, destination.StateElsewhere)
		}
		adminPost(t, nw, "/admin/destinations/"+githubForward+"/resume", fmt.Sprintf("%s-resume-%d", b.run, i))
	}
	time.Sleep(phase) // the load's tail, after the last restart
	endLoad()
	res.Rate = <-loaded

	stranded := rescueAcross(t, b.pool, []*proc{old, nw})
	endWatch()
	wg.Wait()
	*res = mergeAudit(res, auditWith(t, b.pool, b.stub, b.gen, auditOpts{githubForward: true}))

	// Every github delivery sent after new reported ready was received
	// after it, so new's configuration processed it, whichever process
	// received and fetched it: it reached github-forward. One sent
	// earlier may have been processed by old: it has no forward, or one.
	forwarded := b.stub.Effects(forwardPath)
	var after, afterForwarded, before, beforeForwarded int
	for _, r := range b.gen.Records() {
		answers := r.Answers()
		if r.D.Source != "github" || len(answers) == 0 {
			continue
		}
		if _, acked := r.firstAck(); !acked {
			continue
		}
		n := forwarded[githubForwardKey(r.D.ID)]
		if answers[0].Start.Before(newReady) {
			before++
			beforeForwarded += min(n, 1)
			continue
		}
		after++
		res.EffectsExpected++
		if n == 0 {
			res.Lost++
			res.problem("github %s, sent after new was ready, has no %s effect", r.D.ID, githubForward)
			continue
		}
		afterForwarded++
		res.EffectsFound++ // a second one the audit counted doubled
	}
	t.Logf("github deliveries reaching %s: %d of %d sent after new was ready, %d of %d sent before",
		githubForward, afterForwarded, after, beforeForwarded, before)
	if after == 0 {
		res.problem("no github delivery was sent after new was ready")
	}
	if failed := countSends(t, b.pool, "", "failed"); failed > 0 {
		res.problem("%d destination sends failed", failed)
	}
	for _, u := range watch.unknown() {
		res.problem("a destination was reported unknown: %s", u)
	}
	if watch.polls.Load() == 0 {
		res.problem("no process answered GET /admin/destinations")
	}
	if alone, last := res.ackedBetween(time.Time{}, newStarted), res.ackedBetween(lastReturn, time.Now()); alone == 0 || last == 0 {
		res.problem("acknowledged and stored: %d while old ran alone, %d after its last restart; want some of each", alone, last)
	}
	res.Faults = fmt.Sprintf("new config (+%s) joined after %s, ready in %s; %d × kill -9 of old (config without it), %d %s sends unfinished at its restarts%s",
		githubForward, newStarted.Sub(loadStart).Round(100*time.Millisecond), newReady.Sub(newStarted).Round(100*time.Millisecond),
		old.Kills(), unfinished, githubForward, describeStranded(stranded))
	res.report(t)
}

// countSends counts the destination sends in one of states, of
// destination ("": of every destination).
func countSends(t testing.TB, pool *pgxpool.Pool, dest string, states ...string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM destination_send
		WHERE state = ANY($1) AND ($2 = '' OR destination = $2)`, states, dest).Scan(&n); err != nil {
		t.Fatalf("counting sends: %v", err)
	}
	return n
}

// adminPost makes one admin API call that must answer 200.
func adminPost(t testing.TB, p *proc, path, idempotencyKey string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, p.AdminURL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Idempotency-Key", idempotencyKey)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, body)
	}
}

// destinationStatuses is GET /admin/destinations.
func destinationStatuses(ctx context.Context, adminURL string) ([]destination.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, adminURL+"/admin/destinations", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /admin/destinations: %d", resp.StatusCode)
	}
	var page struct {
		Items []destination.Status `json:"items"`
	}
	return page.Items, json.NewDecoder(resp.Body).Decode(&page)
}

func findStatus(sts []destination.Status, name string) (destination.Status, bool) {
	i := slices.IndexFunc(sts, func(st destination.Status) bool { return st.Name == name })
	if i < 0 {
		return destination.Status{}, false
	}
	return sts[i], true
}

// destinationWatch asks processes' admin APIs for their destinations
// while a drill runs and keeps every one reported unknown: configured on
// no running process.
type destinationWatch struct {
	polls atomic.Int64 // answers read
	mu    sync.Mutex
	seen  []string
}

// loop polls every interval until ctx ends. admins maps a process's name
// to its admin URL, "" while it has none; a process that does not answer
// (killed, restarting) is skipped.
func (w *destinationWatch) loop(ctx context.Context, interval time.Duration, admins map[string]func() string) {
	for ctx.Err() == nil {
		for name, url := range admins {
			u := url()
			if u == "" {
				continue
			}
			sts, err := destinationStatuses(ctx, u)
			if err != nil {
				continue
			}
			w.polls.Add(1)
			for _, st := range sts {
				if st.State == destination.StateUnknown {
					w.mu.Lock()
					if len(w.seen) < 10 {
						w.seen = append(w.seen, fmt.Sprintf("%s by %s (%d pending) at %s", st.Name, name, st.Pending, time.Now().Format(time.TimeOnly)))
					}
					w.mu.Unlock()
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}

func (w *destinationWatch) unknown() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen...)
}

// strandedAcrossWhere selects the work jobs still "running" that no live
// process runs: last fetched by a River client ($1 lists the live ones)
// that died with its process. A River client's ID is new on every start.
const strandedAcrossWhere = `kind IN (` + workKinds + `) AND state = 'running'
	AND NOT (coalesce(attempted_by[array_upper(attempted_by, 1)], '') = ANY($1::text[]))`

// rescueAcross is rescue for several processes on one database: it waits
// for the backlog to drain, and if a killed process stranded jobs,
// fast-forwards them and restarts the River leader gracefully, so that the
// next leader's rescuer takes them at once. It returns how many jobs were
// stranded.
func rescueAcross(t *testing.T, pool *pgxpool.Pool, procs []*proc) int {
	t.Helper()
	ctx := context.Background()
	live := make([]string, 0, len(procs))
	for _, p := range procs {
		id := p.riverClientID()
		if id == "" {
			t.Fatalf("no River client ID in %s's log", p.name)
		}
		live = append(live, id)
	}
	var (
		left backlog
		n    int
		err  error
	)
	waitFor(ctx, pick(45*time.Second, 60*time.Second), 200*time.Millisecond, func() bool {
		if left, err = readBacklog(ctx, pool); err != nil || left.empty() {
			return err == nil
		}
		if err = pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE `+strandedAcrossWhere, live).Scan(&n); err != nil {
			return false
		}
		return n > 0 && n == sum(left.Jobs)
	})
	if err != nil {
		t.Fatalf("reading the backlog: %v", err)
	}
	if left.empty() {
		return 0
	}
	t.Logf("after the faults: %s; stranded: %d", left, n)
	if n == 0 || n != sum(left.Jobs) {
		t.Errorf("work left that no fault explains: %s; stranded %d\n%s", left, n, describeUnfinishedJobs(ctx, pool))
		return 0
	}
	if _, err := pool.Exec(ctx, `UPDATE river_job SET attempted_at = attempted_at - interval '2 hours'
		WHERE `+strandedAcrossWhere, live); err != nil {
		t.Fatalf("fast-forward: %v", err)
	}
	var leader string
	_ = pool.QueryRow(ctx, `SELECT leader_id FROM river_leader`).Scan(&leader)
	restart := procs // no leader right now: whichever comes next rescues
	for i, id := range live {
		if id == leader {
			restart = procs[i : i+1]
		}
	}
	for _, p := range restart {
		p.stop()
		if err := p.restart(); err != nil {
			t.Fatal(err)
		}
	}
	if left := settle(t, pool, 60*time.Second); !left.empty() {
		t.Errorf("not settled after rescuing %d stranded jobs (restarted %s): %s", n, names(restart), left)
	}
	return n
}

// describeUnfinishedJobs lists the processing jobs not finished, with what
// tells why none took them: when they are due, their attempts, who tried
// them, and their metadata (a deferral's snoozes).
func describeUnfinishedJobs(ctx context.Context, pool *pgxpool.Pool) string {
	rows, err := pool.Query(ctx, `SELECT format('job %s %s %s: due in %s, attempt %s of %s, attempted by %s, queue %s, metadata %s, errors %s',
			id, kind, state, scheduled_at - now(), attempt, max_attempts, attempted_by, queue, metadata, errors)
		FROM river_job WHERE kind IN (`+workKinds+`) AND state NOT IN ('completed', 'cancelled', 'discarded') ORDER BY id`)
	if err != nil {
		return "unfinished jobs: " + err.Error()
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "unfinished jobs: " + err.Error()
	}
	return strings.Join(lines, "\n")
}

func names(procs []*proc) string {
	out := make([]string, len(procs))
	for i, p := range procs {
		out[i] = p.name
	}
	return strings.Join(out, ", ")
}
