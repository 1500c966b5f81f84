package hookinbox_test

import (
	"context"
	"embed"
	"log"
	"log/slog"
	"os"
	"os/signal"

	"github.com/hookinbox/hookinbox"
	"github.com/hookinbox/hookinbox/handlers"
)

var migrationFiles embed.FS // //go:embed migrations/*.up.sql in a real program

// A binary of your own: the whole hookinbox command line (serve, migrate,
// send, replay, …) with your handler and your table.
func ExampleMain() {
	hookinbox.Main(
		hookinbox.WithMigrations(hookinbox.Sub(migrationFiles, "migrations")),
		hookinbox.WithHandlers(func(r *handlers.Registry, d hookinbox.Deps) error {
			return r.Register(handlers.Registration{
				Name: "acme.stars", Provider: "github", Events: []string{"star"},
				Handler: handlers.HandlerFunc(func(ctx context.Context, e *handlers.Event) error {
					// Written in the delivery's transaction: it commits
					// with the job's completion, once.
					_, err := e.Tx.Exec(ctx, `INSERT INTO stars (delivery_id) VALUES ($1) ON CONFLICT DO NOTHING`, e.DeliveryID)
					return err
				}),
			})
		}),
	)
}

// A program that runs hookinbox inside its own process: its config, its
// logger, its signal handling; Run returns once ctx is done and the
// shutdown has finished.
func ExampleRun() {
	cfg, err := hookinbox.LoadConfig("hookinbox.yaml")
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("component", "hookinbox")
	if err := hookinbox.Run(ctx, cfg, hookinbox.WithLogger(logger), hookinbox.WithShippedHandlers()); err != nil {
		log.Fatal(err)
	}
}
