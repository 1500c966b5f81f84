package main

import (
	"context"
	"os"

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
	return startService(ctx, r.bin, r.work, r.svcURL, serviceOptions{
		Role: role, BatchWindow: r.opts.batchWindow, ProcessBatchSize: r.opts.processBatch,
	})
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
	if r.pg, err = startPostgres(ctx, work, opts.pgStats); err != nil {
		r.close()
		return nil, err
	}
	pg := r.pg
	r.cleanup = append(r.cleanup, func() { pg.close(context.WithoutCancel(ctx), progress) })
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
