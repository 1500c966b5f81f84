package main

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// rig is what every scenario starts from: a work directory, PostgreSQL
// with a database for the service, the binary under test and signed
// payloads.
type rig struct {
	opts     options
	work     string
	pg       *postgres
	svcURL   string
	db       *pgxpool.Pool // on svcURL, for the harness's own queries
	bin      string
	payloads []payload
	cleanup  []func()
}

// start starts `hookinbox serve --role=role` on the service's database,
// with the run's batching settings.
func (r *rig) start(ctx context.Context, role string) (*service, error) {
	return r.startWith(ctx, serviceOptions{Role: role})
}

// startWith is start with more of the service's settings: its name and
// extra configuration.
func (r *rig) startWith(ctx context.Context, o serviceOptions) (*service, error) {
	o.BatchWindow, o.ProcessBatchSize, o.JobPerBatch = r.opts.batchWindow, r.opts.processBatch, r.opts.jobPerBatch
	return startService(ctx, r.bin, r.work, r.svcURL, o)
}

// close undoes setupRig, last step first.
func (r *rig) close() {
	for i := len(r.cleanup) - 1; i >= 0; i-- {
		r.cleanup[i]()
	}
}

func setupRig(ctx context.Context, opts options, root string, progress func(string, ...any)) (*rig, error) {
	r := &rig{opts: opts}
	// The postgres user must reach this directory when we run as root.
	work, err := os.MkdirTemp("", "hookinbox-bench-")
	if err != nil {
		return nil, err
	}
	r.work = work
	r.cleanup = append(r.cleanup, func() { os.RemoveAll(work) })
	if err := os.Chmod(work, 0o755); err != nil {
		r.close()
		return nil, err
	}
	progress("starting PostgreSQL")
	if r.pg, err = startPostgres(ctx, work, opts.pgStats, opts.pgExplain, opts.pgSettings); err != nil {
		r.close()
		return nil, err
	}
	pg := r.pg
	r.cleanup = append(r.cleanup, func() { pg.close(context.WithoutCancel(ctx), progress) })
	if opts.pgExplain > 0 {
		// Before the server and its log are removed (cleanups run last
		// first).
		logPath := filepath.Join(root, "bench", "results", time.Now().UTC().Format("2006-01-02T15-04-05Z")+".pg.log")
		r.cleanup = append(r.cleanup, func() {
			if err := pg.keepLog(logPath); err != nil {
				progress("warning: keeping the server's log: %v", err)
				return
			}
			progress("the server's log, with auto_explain's plans: %s", logPath)
		})
	}
	if r.svcURL, err = pg.createDatabase(ctx, "svc", false); err != nil {
		r.close()
		return nil, err
	}
	if opts.pgStats {
		if err := createStatementStats(ctx, r.svcURL); err != nil {
			r.close()
			return nil, err
		}
	}
	if r.db, err = openPool(ctx, r.svcURL); err != nil {
		r.close()
		return nil, err
	}
	r.cleanup = append(r.cleanup, r.db.Close)
	progress("building hookinbox")
	if r.bin, err = buildHookinbox(ctx, root, work); err != nil {
		r.close()
		return nil, err
	}
	if r.payloads, err = newPayloads(opts.payloadMin, opts.payloadMax, benchSecret); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// pgbenchBaseline runs pgbench's one-delivery transaction at
// -concurrency clients for -duration, on a database of its own migrated
// like the service's, after a checkpoint: the rate the scenarios' loads
// are fractions of. It returns the phase's CPU too: its `other` less
// pgbench's own client is what else ran on the machine meanwhile.
func (r *rig) pgbenchBaseline(ctx context.Context, progress func(string, ...any)) (pgbenchResult, cpuUse, error) {
	progress("baseline: pgbench, %d clients, %s", r.opts.concurrency, r.opts.duration)
	res, use, err := r.pgbench(ctx, 0, r.opts.duration, progress)
	if err == nil {
		progress("pgbench: %.0f tps", res.TPS)
	}
	return res, use, err
}

// pgbench runs the one-delivery transaction on a database of its own, at
// rate transactions a second (0: as fast as it goes), and measures the
// machine's CPU over it.
func (r *rig) pgbench(ctx context.Context, rate float64, d time.Duration, progress func(string, ...any)) (pgbenchResult, cpuUse, error) {
	u, err := r.pg.createDatabase(ctx, "pgbench", true)
	if err != nil {
		return pgbenchResult{}, cpuUse{}, err
	}
	r.settle(ctx, progress)
	end := cpuMeter{postmasterPID: r.pg.postmasterPID()}.span(ctx, r.pg, u)
	res, err := runPgbench(ctx, pgbenchConfig{
		BinDir: r.pg.binDir, URL: u, Work: r.work, Clients: r.opts.concurrency,
		Duration: d, Payloads: r.payloads, Rate: rate,
	})
	use := end()
	if err != nil {
		return res, use, err
	}
	// pgbench's updates leave its tables to autovacuum, which ran in the
	// middle of the steady steps (a burst of slow answers there, in
	// another database): the phases after this one must not pay for it.
	return res, use, r.pg.dropDatabase(ctx, "pgbench")
}

// settle flushes the WAL of what ran before (CHECKPOINT), so that it is
// not written in the middle of the next phase's latencies.
func (r *rig) settle(ctx context.Context, progress func(string, ...any)) {
	if err := r.pg.checkpoint(ctx); err != nil {
		progress("warning: %v", err)
	}
}
