package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/pgembed"
)

// database is the pool and, when no URL was configured, the embedded server
// behind it.
type database struct {
	pool     *pgxpool.Pool
	embedded *pgembed.Server
	// borrowed is a pool the caller gave and closes.
	borrowed bool
}

// openDatabase returns a pool on cfg.DatabaseURL, or starts the embedded
// PostgreSQL under cfg.DataDir when no URL is configured. The pool connects
// lazily: a database that is down now is retried by the caller.
func openDatabase(ctx context.Context, cfg config.Config, logger *slog.Logger) (*database, error) {
	db := &database{}
	url := cfg.DatabaseURL
	if url == "" {
		dir, err := filepath.Abs(filepath.Join(cfg.DataDir, "pg"))
		if err != nil {
			return nil, err
		}
		logger.Info("no database_url configured: starting embedded PostgreSQL", "data_dir", dir)
		db.embedded, err = pgembed.Start(ctx, pgembed.Config{DataDir: dir, Fsync: true, Logger: logger})
		if errors.Is(err, pgembed.ErrNoBinaries) {
			return nil, fmt.Errorf("%w\n(or set DATABASE_URL / database_url to use an existing PostgreSQL)", err)
		}
		if err != nil {
			return nil, fmt.Errorf("embedded PostgreSQL: %w", err)
		}
		url = db.embedded.URL() // pgembed logged it, with the data dir used
	}
	poolCfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		db.close(ctx, logger)
		return nil, fmt.Errorf("database_url: %w", err) // pgx does not echo the password
	}
	if poolCfg.MaxConns < 20 {
		// Ingest requests and River's workers share the pool; pgx's default
		// (max(4, CPUs)) starves one or the other under load.
		poolCfg.MaxConns = 20
	}
	db.pool, err = pgxpool.NewWithConfig(ctx, poolCfg)
	if err != nil {
		db.close(ctx, logger)
		return nil, err
	}
	return db, nil
}

func (db *database) close(ctx context.Context, logger *slog.Logger) {
	if db.pool != nil && !db.borrowed {
		db.pool.Close()
	}
	if db.embedded != nil {
		if err := db.embedded.Stop(ctx); err != nil {
			logger.Error("stop embedded PostgreSQL", "error", err)
		} else {
			logger.Info("embedded PostgreSQL stopped")
		}
	}
}
