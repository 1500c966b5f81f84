-- migrations/020_inbox_body_key.up.sql: the column first (no rewrite, a
-- nullable column without a default), for the index after it.
ALTER TABLE inbox ADD COLUMN IF NOT EXISTS body_key bytea NULL
