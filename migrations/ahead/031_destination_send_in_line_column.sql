-- migrations/031_destination_send_in_line.up.sql: the column first (no
-- rewrite: its default is a constant), for the index after it.
ALTER TABLE destination_send ADD COLUMN IF NOT EXISTS in_line boolean NOT NULL DEFAULT true
