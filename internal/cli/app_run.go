package cli

import (
	"context"
	"fmt"
	"time"
)

// Start serves webhooks and the admin listener, and starts the workers in
// the background: the listeners are up before the database, so /healthz
// answers and /readyz says 503 while the process waits for it, and an
// orchestrator can tell the two apart. Call it once.
func (a *App) Start(ctx context.Context) {
	go func() { a.serveErr <- a.srv.Serve(a.ln) }()
	go func() { a.serveErr <- a.adminSrv.Serve(a.adminLn) }()
	a.logger.Info("hookinbox listening", "addr", a.ln.Addr().String(), "sources", a.names)
	// The console is what a new user looks for first: the line names its
	// URL and how to get in.
	adminURL := "http://" + a.adminLn.Addr().String()
	signIn := "none: no admin.token, so loopback only"
	if a.cfg.Admin.Token != "" {
		signIn = "admin.token, at " + adminURL + "/login"
	}
	a.logger.Info("admin listening", "addr", a.adminLn.Addr().String(), "console", adminURL+"/console/", "sign_in", signIn,
		"river_ui", adminURL+"/riverui/", "authenticated", a.cfg.Admin.Token != "")

	var startCtx context.Context
	startCtx, a.cancelStart = context.WithCancel(ctx)
	go func() {
		defer close(a.startDone)
		if startWorkers(startCtx, a.db, a.river, a.gen, a.migrate, a.migs, func() { a.migrated.Store(true) }, a.startSenders, a.logger) != nil {
			return
		}
		a.kafka.start(startCtx)
		a.riverStarted.Store(a.role != RoleIngest)
		if a.gen != nil && startGeneration(startCtx, a.gen, a.logger) != nil {
			return
		}
		// After the generation: nothing may come between River's start and
		// this process saying which configuration it runs.
		adviseDatabase(startCtx, a.db, a.logger)
		a.ready.Store(true)
		a.logger.Info("hookinbox ready")
	}()
}

// startSenders records the destinations this process has before River
// processes a delivery routed to them, so that no other process shows them
// as unknown meanwhile.
func (a *App) startSenders(ctx context.Context) error {
	if a.dests == nil || a.sendersStarted.Load() {
		return nil
	}
	if err := a.dests.Start(ctx); err != nil {
		return fmt.Errorf("destination senders: %w", err)
	}
	a.sendersStarted.Store(true)
	return nil
}

// Ready reports whether the process has migrated (or found the schema
// migrated), started its workers and settled with older processes.
func (a *App) Ready() bool { return a.ready.Load() }

// Failed delivers the error of a listener that stopped serving.
func (a *App) Failed() <-chan error { return a.serveErr }

// Stop stops taking requests, lets in-flight ones, sends and running jobs
// finish within config's shutdown_timeout, cancels what is left, and
// closes what NewApp opened. A job cancelled here rolls back and is
// retried by the next process: nothing is lost.
func (a *App) Stop() {
	// Cancelling start ends the generation's looks while River still
	// works: its fence (jobs.Generation) holds this process's processing
	// jobs from 6 looks on, before the processes of a newer configuration
	// count it gone at 10 and report ready without it.
	if a.cancelStart != nil {
		a.cancelStart()
		<-a.startDone
	}
	// Kafka sources stop as webhooks do: the batch in hand is recorded
	// and its offsets committed before River stops.
	a.kafka.stop()
	senders := a.dests
	if !a.sendersStarted.Load() {
		senders = nil
	}
	if shutdown(a.srv, a.adminSrv, senders, a.river, a.riverStarted.Load(), a.cfg.ShutdownTimeout.Std(), a.logger) && a.gen != nil {
		a.leave()
	}
	a.close()
}

// leave tells the processes of newer configurations that start from now
// on not to wait for this one, which works no more jobs (jobs.Generation's
// Leave). Not told, they wait for it to go silent.
func (a *App) leave() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.gen.Leave(ctx); err != nil {
		a.logger.Warn("this process's leaving not recorded: a process of a newer configuration starting within 10 s waits for it", "error", err)
	}
}

// Run starts the process and serves until ctx is done or a listener
// fails, then stops it. A listener's failure is logged and shuts the
// process down as a signal would.
func (a *App) Run(ctx context.Context) error {
	a.Start(ctx)
	select {
	case <-ctx.Done():
		a.logger.Info("shutting down", "budget", a.cfg.ShutdownTimeout.Std().String())
	case err := <-a.serveErr:
		a.logger.Error("listener failed", "error", err)
	}
	a.Stop()
	return nil
}
