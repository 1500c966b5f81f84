package cli

import (
	"context"
	"log/slog"

	"github.com/hookinbox/hookinbox/migrations"
)

func migrateCmd(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("migrate", e)
	configPath := configFlag(fs, e)
	prepare := fs.Bool("prepare", false, "do ahead, while the service runs, the slow parts of the pending migrations (copies, index builds); then run migrate")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := loadConfig(*configPath, e)
	if err != nil {
		return err
	}
	migs := migrations.Options{App: e.ext.Migrations}
	if err := migrations.Validate(migs); err != nil {
		return err // before starting a database to apply them to
	}
	logger := newLogger(e.stderr)
	db, err := openDatabase(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer db.close(context.WithoutCancel(ctx), logger)
	if *prepare {
		return prepareMigrations(ctx, db, logger)
	}
	res, err := migrations.UpWith(ctx, db.pool, logger, migs)
	if err != nil {
		return err
	}
	if len(res.RiverVersions)+len(res.HookinboxVersions)+len(res.AppVersions) == 0 {
		logger.Info("database is up to date")
	}
	return nil
}

func prepareMigrations(ctx context.Context, db *database, logger *slog.Logger) error {
	res, err := migrations.Prepare(ctx, db.pool, logger)
	if err != nil {
		return err
	}
	if len(res.Versions) == 0 {
		logger.Info("nothing to prepare: no pending migration has work to do ahead")
		return nil
	}
	logger.Info("migrations prepared: run migrate to apply them", "hookinbox", res.Versions)
	return nil
}
