package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/hookinbox/hookinbox/migrations"
)

// The upgrade scenario: how long migration 026, which makes the inbox
// partitioned, holds the writes of the older version's ingest on an inbox
// of -upgrade-rows deliveries, migrated as it is and after `hookinbox
// migrate --prepare`, and what the prepare costs that ingest while it runs.
// Both arms start from the same inbox (a copy of one database); an open
// loop of the older version's inserts runs through each.

var (
	//go:embed sql/upgrade_seed.sql
	upgradeSeedSQL string
	//go:embed sql/upgrade_ingest.sql
	upgradeIngestSQL string
)

// upgradeFrom is the last migration of the version being upgraded.
const upgradeFrom = 25

type upgradeResult struct {
	runInfo
	Rows     int        `json:"rows"`
	Rate     float64    `json:"ingest_rate"` // the older ingest's open loop, inserts/s
	Plain    upgradeArm `json:"plain"`
	Prepared upgradeArm `json:"prepared"`
	// HeldRatio is the longest wait of an insert during the prepared
	// arm's migrate over the plain arm's: how much of the hold preparing
	// took away.
	HeldRatio float64 `json:"held_ratio"`
}

type upgradeArm struct {
	Before  insertPhase  `json:"before"`            // the older ingest alone
	Prepare *insertPhase `json:"prepare,omitempty"` // while migrate --prepare ran
	Migrate insertPhase  `json:"migrate"`           // while migrate ran
}

// insertPhase is what the inserts that started during a phase saw.
type insertPhase struct {
	Seconds float64 `json:"seconds"`
	Inserts int     `json:"inserts"`
	Failed  int     `json:"failed"` // after the migration, the older insert fails as it does in production
	P99Ms   float64 `json:"p99_ms"`
	MaxMs   float64 `json:"max_ms"`
}

func runUpgrade(ctx context.Context, opts options, root string, progress func(string, ...any)) error {
	res := upgradeResult{runInfo: newRunInfo(ctx, opts, root, progress), Rows: opts.upgradeRows, Rate: 200}
	out := resultsPath(opts, root, res.Started, "upgrade")
	work, err := os.MkdirTemp("", "hookinbox-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if err := os.Chmod(work, 0o755); err != nil { // the postgres user works here
		return err
	}
	progress("starting PostgreSQL")
	pg, err := startPostgres(ctx, work, false, 0, opts.pgSettings)
	if err != nil {
		return err
	}
	defer pg.close(context.WithoutCancel(ctx), progress)
	res.Database = pg.describe()

	plainURL, err := pg.createDatabase(ctx, "upgrade_plain", false)
	if err != nil {
		return err
	}
	if err := seedUpgrade(ctx, plainURL, opts.upgradeRows, progress); err != nil {
		return err
	}
	pg.closeStats(ctx, plainURL) // a template takes no connections
	preparedURL, err := pg.copyDatabase(ctx, "upgrade_plain", "upgrade_prepared")
	if err != nil {
		return err
	}
	if res.Plain, err = upgradeArmRun(ctx, pg, plainURL, false, res.Rate, progress); err != nil {
		return err
	}
	if res.Prepared, err = upgradeArmRun(ctx, pg, preparedURL, true, res.Rate, progress); err != nil {
		return err
	}
	if res.Plain.Migrate.MaxMs > 0 {
		res.HeldRatio = res.Prepared.Migrate.MaxMs / res.Plain.Migrate.MaxMs
	}
	res.finish()
	printUpgrade(os.Stdout, res)
	progress("wrote %s", out)
	return writeJSON(out, res)
}

// seedUpgrade migrates a new database to the older version and fills its
// inbox.
func seedUpgrade(ctx context.Context, url string, rows int, progress func(string, ...any)) error {
	pool, err := openPool(ctx, url)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := migrateTo(ctx, pool, upgradeFrom); err != nil {
		return err
	}
	progress("seeding %d deliveries in the inbox of migration %03d", rows, upgradeFrom)
	const chunk = 50_000
	for from := 1; from <= rows; from += chunk {
		if _, err := pool.Exec(ctx, upgradeSeedSQL, from, min(from+chunk-1, rows)); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
	}
	_, err = pool.Exec(ctx, "VACUUM ANALYZE inbox, inbox_outcome")
	return err
}

// migrateTo applies River's migrations and hookinbox's up to version, and
// records them as `hookinbox migrate` does.
func migrateTo(ctx context.Context, pool *pgxpool.Pool, version int) error {
	river, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return err
	}
	if _, err := river.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return err
	}
	all, err := migrations.All()
	if err != nil {
		return err
	}
	_, err = pool.Exec(ctx, `CREATE TABLE hookinbox_migration (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`)
	for _, m := range all {
		if err != nil || m.Version > version {
			break
		}
		if _, err = pool.Exec(ctx, m.SQL); err == nil {
			_, err = pool.Exec(ctx, "INSERT INTO hookinbox_migration (version, name) VALUES ($1, $2)", m.Version, m.Name)
		}
	}
	return err
}

// upgradeArmRun runs the older ingest alone for a while, then, with it
// still running, migrate --prepare (with prepare) and migrate.
func upgradeArmRun(ctx context.Context, pg *postgres, url string, prepare bool, rate float64, progress func(string, ...any)) (upgradeArm, error) {
	var arm upgradeArm
	pool, err := openPool(ctx, url)
	if err != nil {
		return arm, err
	}
	defer pool.Close()
	if err := pg.checkpoint(ctx); err != nil {
		return arm, err
	}
	loop := startUpgradeIngest(ctx, pool, rate)
	mark := time.Now()
	phase := func() (time.Time, time.Time) { from := mark; mark = time.Now(); return from, mark }
	time.Sleep(10 * time.Second)
	arm.Before = loop.phase(phase())
	if prepare {
		progress("migrate --prepare, with the older ingest at %.0f/s", rate)
		if _, err := migrations.Prepare(ctx, pool, nil); err != nil {
			loop.stop()
			return arm, err
		}
		p := loop.phase(phase())
		arm.Prepare = &p
	}
	progress("migrate (prepared: %v)", prepare)
	if _, err := migrations.Up(ctx, pool, nil); err != nil {
		loop.stop()
		return arm, err
	}
	from, to := phase()
	loop.stop() // every insert that started during migrate has ended
	arm.Migrate = loop.phase(from, to)
	progress("migrate held the older ingest up to %.0f ms", arm.Migrate.MaxMs)
	return arm, nil
}

type upgradeInsert struct {
	start   time.Time
	latency time.Duration
	failed  bool
}

// upgradeIngest is an open loop of the older version's inserts.
type upgradeIngest struct {
	mu      sync.Mutex
	inserts []upgradeInsert
	wg      sync.WaitGroup
	done    chan struct{}
}

func startUpgradeIngest(ctx context.Context, pool *pgxpool.Pool, rate float64) *upgradeIngest {
	l := &upgradeIngest{done: make(chan struct{})}
	body := make([]byte, 2048)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-l.done:
				return
			case <-tick.C:
			}
			l.wg.Add(1)
			go func(id string) {
				defer l.wg.Done()
				start := time.Now()
				_, err := pool.Exec(ctx, upgradeIngestSQL, id, body)
				l.mu.Lock()
				l.inserts = append(l.inserts, upgradeInsert{start: start, latency: time.Since(start), failed: err != nil})
				l.mu.Unlock()
			}(fmt.Sprintf("during-upgrade-%d", n))
		}
	}()
	return l
}

// stop ends the loop and waits for the inserts under way.
func (l *upgradeIngest) stop() {
	close(l.done)
	l.wg.Wait()
}

// phase sums up the inserts that started in [from, to).
func (l *upgradeIngest) phase(from, to time.Time) insertPhase {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := insertPhase{Seconds: to.Sub(from).Seconds()}
	var ms []float64
	for _, in := range l.inserts {
		if in.start.Before(from) || !in.start.Before(to) {
			continue
		}
		p.Inserts++
		if in.failed {
			p.Failed++
		}
		ms = append(ms, float64(in.latency.Microseconds())/1000)
	}
	if len(ms) > 0 {
		sort.Float64s(ms)
		p.P99Ms = ms[min(len(ms)-1, len(ms)*99/100)]
		p.MaxMs = ms[len(ms)-1]
	}
	return p
}

// copyDatabase makes a database from another one, file by file.
func (pg *postgres) copyDatabase(ctx context.Context, fromRole, role string) (string, error) {
	conn, err := pgx.Connect(ctx, pg.adminURL)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	name := databaseName(role)
	sql := fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s STRATEGY FILE_COPY",
		pgx.Identifier{name}.Sanitize(), pgx.Identifier{databaseName(fromRole)}.Sanitize())
	if _, err := conn.Exec(ctx, sql); err != nil {
		return "", fmt.Errorf("copy database: %w", err)
	}
	pg.created = append(pg.created, name)
	return withDatabase(pg.adminURL, name)
}

func printUpgrade(w io.Writer, r upgradeResult) {
	fmt.Fprintf(w, "upgrade: migration %03d → 026 on %d deliveries, the older ingest at %.0f inserts/s throughout\n", upgradeFrom, r.Rows, r.Rate)
	fmt.Fprintf(w, "%-9s %12s %14s %14s %16s %16s\n", "arm", "prepare (s)", "migrate (s)", "held (max ms)", "p99 before (ms)", "p99 prepare (ms)")
	for _, a := range []struct {
		name string
		arm  upgradeArm
	}{{"plain", r.Plain}, {"prepared", r.Prepared}} {
		prep, prepP99 := "-", "-"
		if p := a.arm.Prepare; p != nil {
			prep, prepP99 = fmt.Sprintf("%.1f", p.Seconds), fmt.Sprintf("%.1f", p.P99Ms)
		}
		fmt.Fprintf(w, "%-9s %12s %14.2f %14.0f %16.1f %16s\n", a.name, prep, a.arm.Migrate.Seconds, a.arm.Migrate.MaxMs, a.arm.Before.P99Ms, prepP99)
	}
	fmt.Fprintf(w, "held, prepared over plain: %.3f\n", r.HeldRatio)
}
