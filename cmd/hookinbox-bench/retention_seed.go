package main

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

var (
	//go:embed sql/retention_seed.sql
	retentionSeedSQL string
	//go:embed sql/retention_partition_end.sql
	retentionPartitionEndSQL string
)

// seedExpiredPartition writes rows expired deliveries into an inbox
// partition of their own, made past the existing ones, and opens the
// inbox's next key generation past them, so new deliveries go after the
// history, as weeks of traffic leave it. It returns the partition and the
// key generation that holds the history's keys.
func seedExpiredPartition(ctx context.Context, db *pgxpool.Pool, rows int, progress func(string, ...any)) (string, string, error) {
	var lo int64
	if err := db.QueryRow(ctx, retentionPartitionEndSQL).Scan(&lo); err != nil {
		return "", "", err
	}
	hi := lo + int64(rows)
	progress("seeding %d expired deliveries in a partition of their own, ids [%d, %d)", rows, lo, hi)
	if _, err := db.Exec(ctx, "SELECT inbox_partition_create($1, $2)", lo, hi); err != nil {
		return "", "", fmt.Errorf("seed: %w", err)
	}
	if err := seedExpiredIDs(ctx, db, lo, rows); err != nil {
		return "", "", err
	}
	var keys string
	if err := db.QueryRow(ctx, "SELECT tableoid::regclass::text FROM inbox_key WHERE inbox_id = $1", lo).Scan(&keys); err != nil {
		return "", "", err
	}
	if err := openKeyGeneration(ctx, db); err != nil {
		return "", "", err
	}
	return fmt.Sprintf("inbox_p%d", lo), keys, vacuumInbox(ctx, db)
}

// openKeyGeneration opens the inbox's next key generation, with a
// partition for its first 10,000,000 ids, as the inbox_partitions job does
// once the longest retention has passed (internal/inbox/key_generations.go).
func openKeyGeneration(ctx context.Context, db *pgxpool.Pool) error {
	var lo int64
	if err := db.QueryRow(ctx, "SELECT max(hi) FROM inbox_key_generation").Scan(&lo); err != nil {
		return err
	}
	if _, err := db.Exec(ctx, "SELECT inbox_key_generation_create($1, $2)", lo, lo+1<<40); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	if _, err := db.Exec(ctx, "SELECT inbox_partition_create($1, $2)", lo, lo+10_000_000); err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(26731, 1)"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "UPDATE inbox_key_generation SET opened_at = now() WHERE lo = $1 RETURNING setval('inbox_id_seq', lo, false)", lo)
		return err
	})
}

// seedExpiredOpen writes rows expired deliveries with the inbox's next
// ids, into the partition new deliveries go to: retention can only delete
// them by batches, as it did every delivery before the inbox had
// partitions.
func seedExpiredOpen(ctx context.Context, db *pgxpool.Pool, rows int, progress func(string, ...any)) error {
	var lo int64
	if err := db.QueryRow(ctx, "SELECT nextval('inbox_id_seq')").Scan(&lo); err != nil {
		return err
	}
	if _, err := db.Exec(ctx, "SELECT setval('inbox_id_seq', $1)", lo+int64(rows)); err != nil {
		return err
	}
	progress("seeding %d expired deliveries among the new ones, ids [%d, %d)", rows, lo, lo+int64(rows))
	if err := seedExpiredIDs(ctx, db, lo, rows); err != nil {
		return err
	}
	return vacuumInbox(ctx, db)
}

func seedExpiredIDs(ctx context.Context, db *pgxpool.Pool, lo int64, rows int) error {
	const chunk = 50_000
	for from := 0; from < rows; from += chunk {
		to := min(from+chunk, rows) - 1
		if _, err := db.Exec(ctx, retentionSeedSQL, from, to, lo); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
	}
	return nil
}

func vacuumInbox(ctx context.Context, db *pgxpool.Pool) error {
	_, err := db.Exec(ctx, "VACUUM ANALYZE inbox, inbox_key, inbox_outcome")
	return err
}
