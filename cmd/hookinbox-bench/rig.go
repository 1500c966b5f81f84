package main

import (
	"context"
	"os"
)

// rig is what every scenario starts from: a work directory, PostgreSQL
// with a database for the service, the binary under test and signed
// payloads.
type rig struct {
	work     string
	pg       *postgres
	svcURL   string
	bin      string
	payloads []payload
	cleanup  []func()
}

// close undoes setupRig, last step first.
func (r *rig) close() {
	for i := len(r.cleanup) - 1; i >= 0; i-- {
		r.cleanup[i]()
	}
}

func setupRig(ctx context.Context, opts options, root string, progress func(string, ...any)) (*rig, error) {
	r := &rig{}
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
