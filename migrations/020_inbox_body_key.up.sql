-- A body replayed under a fresh delivery id. Some senders sign neither
-- their delivery id nor a time (GitHub's X-GitHub-Delivery, Shopify,
-- Twilio, GitLab's secret token): anyone holding one captured request can
-- post it again with a new id. For their sources ingest sets body_key, a
-- digest of the event type and the body, and this index makes the same
-- body of the same event type a duplicate, decided like a repeated id: by
-- a unique constraint, in the inserting transaction. Rows of other sources
-- leave it NULL and are not in the index.
--
-- The index starts empty, but building it reads the whole inbox while
-- holding ingest's writes: with a large inbox, `hookinbox migrate
-- --prepare` adds the column and builds the index beforehand, CONCURRENTLY
-- (ahead/020_inbox_body_key_*.sql), and this migration finds them there.
ALTER TABLE inbox ADD COLUMN IF NOT EXISTS body_key bytea NULL;
CREATE UNIQUE INDEX IF NOT EXISTS inbox_body_key_idx ON inbox (source, body_key) WHERE body_key IS NOT NULL;
