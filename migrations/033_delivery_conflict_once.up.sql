-- A conflicting request sent again (a replayed capture, or a sender that
-- keeps sending a changed body under one delivery id) added a
-- delivery_conflict row each time: anyone holding one signed request could
-- add a row, and up to 64 KiB of body, per request sent, for as long as
-- retention keeps them. Now the table holds one row per source, delivery
-- id and body digest, and counts the copies: copies (the first included)
-- and the time of the last, last_received_at (NULL while there is one).
-- internal/inbox/sql/conflict_insert.sql adds a copy to the row it finds.
--
-- The rows already there are merged first: the oldest of each key stays,
-- with the count and the last time of the others. The table holds
-- retention's 7 days of conflicts, few in any normal traffic, so the
-- unique index is built here rather than ahead of the migration.
ALTER TABLE delivery_conflict
    ADD COLUMN IF NOT EXISTS copies bigint NOT NULL DEFAULT 1,
    ADD COLUMN IF NOT EXISTS last_received_at timestamptz NULL;

LOCK TABLE delivery_conflict IN SHARE ROW EXCLUSIVE MODE;
WITH keyed AS (
    SELECT id, min(id) OVER w AS keep, count(*) OVER w AS n, max(received_at) OVER w AS last
    FROM delivery_conflict
    WINDOW w AS (PARTITION BY source, delivery_id, payload_sha256)
), merged AS (
    UPDATE delivery_conflict c SET copies = k.n, last_received_at = k.last
    FROM keyed k
    WHERE c.id = k.id AND k.id = k.keep AND k.n > 1
)
DELETE FROM delivery_conflict c
USING keyed k
WHERE c.id = k.id AND k.id <> k.keep;

CREATE UNIQUE INDEX IF NOT EXISTS delivery_conflict_once_idx ON delivery_conflict (source, delivery_id, payload_sha256);
