-- The inbox retires by partition. Retention deleted expired deliveries
-- row by row: each paid its insert and, days later, its delete, its index
-- cleanup and its vacuum. Now the inbox and inbox_outcome are partitioned
-- by ranges of the inbox id, which the sequence hands out in the order
-- deliveries arrive, so a partition holds the deliveries of a span of
-- time; once every delivery of a partition is expired and finished,
-- retention drops the partition in one statement (docs/operations.md,
-- "Retention").
--
-- A unique constraint of a partitioned table must include the partition
-- key, so it cannot decide a duplicate across partitions. The decision
-- moves to inbox_key, a narrow table of one row per delivery: ingest
-- inserts there first, and only a key that was new inserts its inbox row,
-- in the same statement. Its rows also answer "which stored delivery is
-- this a duplicate of" without reading the inbox. Retention deletes a
-- partition's keys after it has dropped the partition: until then, every
-- stored delivery keeps its key.
--
-- Everything down to "ahead: end" may already be there: `hookinbox
-- migrate --prepare` runs it ahead and fills inbox_key while ingest goes
-- on (migrations/ahead/026_inbox_key_follow.sql), so that this migration,
-- which holds the inbox's writes, has no keys left to copy.

CREATE TABLE IF NOT EXISTS inbox_key (
    source         text   NOT NULL,
    delivery_id    text   NOT NULL,
    inbox_id       bigint NOT NULL,
    payload_sha256 bytea  NOT NULL,
    origin         text   NOT NULL,
    body_key       bytea  NULL,
    PRIMARY KEY (source, delivery_id)
);
-- A body replayed under a fresh id (migration 020).
CREATE UNIQUE INDEX IF NOT EXISTS inbox_key_body_key_idx ON inbox_key (source, body_key) WHERE body_key IS NOT NULL;

-- A dropped partition's keys, found by its id range after the partition
-- is gone. Keys are inserted in about the order of their ids, so a BRIN
-- index finds a window of ids' pages for the cost of a few summary rows,
-- where a btree would add an entry to every delivery's insert. 16 pages
-- (about a thousand keys) to a summary: retention deletes windows of a
-- thousand ids, and reads little more than their pages.
CREATE INDEX IF NOT EXISTS inbox_key_inbox_id_brin ON inbox_key USING brin (inbox_id) WITH (pages_per_range = 16);

-- Partitions retention dropped whose keys are still to be deleted: lo
-- names the partition, [next, hi) are the ids left to do. A row is
-- inserted with the drop, its next moves past each window of keys
-- deleted, and the row goes with the last one, so a pass cut short
-- carries on where it stopped.
CREATE TABLE IF NOT EXISTS inbox_retired (
    lo   bigint PRIMARY KEY,
    hi   bigint NOT NULL,
    next bigint NOT NULL
);

-- ahead: end

-- No delivery is written while the inbox changes shape. Copying the keys
-- (unless `migrate --prepare` did) and checking the existing rows' id range
-- read the whole inbox under this lock: docs/operations.md, "Upgrades and
-- backups", says how to do both beforehand, and how long they take.
LOCK TABLE inbox, inbox_outcome, inbox_pending IN ACCESS EXCLUSIVE MODE;

-- Prepared keys are whole: the triggers kept them so since the copy began
-- (migrations/ahead/026_inbox_key_follow.sql), and the tombstones of rows
-- deleted meanwhile go. Otherwise the copy is made, or finished, here.
DELETE FROM inbox_key WHERE inbox_id < 0;
DO $$
BEGIN
    IF obj_description('inbox_key'::regclass, 'pg_class') IS DISTINCT FROM 'hookinbox: every key of the inbox' THEN
        INSERT INTO inbox_key (source, delivery_id, inbox_id, payload_sha256, origin, body_key)
        SELECT source, delivery_id, id, payload_sha256, origin, body_key FROM inbox
        ON CONFLICT DO NOTHING;
    END IF;
END
$$;
DROP TRIGGER IF EXISTS inbox_key_follow_insert ON inbox;
DROP TRIGGER IF EXISTS inbox_key_follow_delete ON inbox;
DROP FUNCTION IF EXISTS inbox_key_follow_insert();
DROP FUNCTION IF EXISTS inbox_key_follow_delete();
COMMENT ON TABLE inbox_key IS NULL;

-- A replay's foreign key would stop a partition from being dropped while
-- the replay's row exists; retention deletes a delivery's replays itself.
ALTER TABLE replay DROP CONSTRAINT IF EXISTS replay_inbox_id_fkey;
ALTER TABLE inbox DROP CONSTRAINT inbox_source_delivery_id_key;
DROP INDEX inbox_body_key_idx;

-- The existing table becomes the first partition, everything below the
-- next id. The CHECK constraint lets ATTACH skip its own scan; a valid
-- inbox_id_below made beforehand (the large-inbox upgrade) is used as it is.
DO $$
DECLARE
    below bigint;
BEGIN
    SELECT substring(pg_get_constraintdef(oid) FROM 'id < \(?''?(\d+)')::bigint INTO below
    FROM pg_constraint
    WHERE conrelid = 'inbox'::regclass AND conname = 'inbox_id_below' AND convalidated;
    IF below IS NULL THEN
        SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END INTO below FROM inbox_id_seq;
        ALTER TABLE inbox DROP CONSTRAINT IF EXISTS inbox_id_below;
        EXECUTE format('ALTER TABLE inbox ADD CONSTRAINT inbox_id_below CHECK (id < %s)', below);
    END IF;
    EXECUTE format('ALTER TABLE inbox_outcome ADD CONSTRAINT inbox_outcome_id_below CHECK (inbox_id < %s)', below);
    -- The sequence must never hand out an id the first partition may
    -- not hold: with the pre-made constraint it skips to its bound.
    PERFORM setval('inbox_id_seq', below, false)
    WHERE (SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM inbox_id_seq) < below;
    PERFORM set_config('hookinbox.inbox_below', below::text, true);
END
$$;

ALTER TABLE inbox RENAME TO inbox_p0;
ALTER INDEX inbox_pkey RENAME TO inbox_p0_pkey;
ALTER INDEX inbox_received_at_idx RENAME TO inbox_p0_received_at_idx;
ALTER INDEX inbox_event_type_idx RENAME TO inbox_p0_event_type_idx;
ALTER TABLE inbox_outcome RENAME TO inbox_outcome_p0;
ALTER INDEX inbox_outcome_pkey RENAME TO inbox_outcome_p0_pkey;
ALTER INDEX inbox_outcome_resource_idx RENAME TO inbox_outcome_p0_resource_idx;
ALTER INDEX inbox_outcome_status_idx RENAME TO inbox_outcome_p0_status_idx;

-- id has no default: ingest takes it from the sequence with the key. An
-- older replica's insert during a rolling deploy names no id, so it fails
-- (its ingest answers 503, and the provider retries against a newer one)
-- rather than store a delivery without its key, past dedup.
CREATE TABLE inbox (
    id             bigint      NOT NULL,
    source         text        NOT NULL,
    delivery_id    text        NOT NULL,
    event_type     text        NOT NULL,
    occurred_at    timestamptz NULL,
    headers        jsonb       NOT NULL DEFAULT '{}',
    payload        bytea       NOT NULL,
    payload_sha256 bytea       NOT NULL,
    received_at    timestamptz NOT NULL DEFAULT now(),
    origin         text        NOT NULL DEFAULT 'webhook',
    body_key       bytea       NULL,
    PRIMARY KEY (id)
) PARTITION BY RANGE (id);
ALTER SEQUENCE inbox_id_seq OWNED BY inbox.id;
CREATE INDEX inbox_received_at_idx ON inbox (received_at);
CREATE INDEX inbox_event_type_idx ON inbox (event_type, id);
ALTER TABLE inbox
    ALTER COLUMN payload SET STATISTICS 0,
    ALTER COLUMN headers SET STATISTICS 0;
DO $$
BEGIN
    IF current_setting('server_version_num')::int >= 140000 THEN
        EXECUTE 'ALTER TABLE inbox ALTER COLUMN payload SET COMPRESSION lz4';
    END IF;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'inbox.payload stays pglz-compressed: %', SQLERRM;
END
$$;

CREATE TABLE inbox_outcome (
    inbox_id     bigint      NOT NULL,
    source       text        NOT NULL,
    event_type   text        NOT NULL,
    received_at  timestamptz NOT NULL,
    status       text        NOT NULL CONSTRAINT inbox_outcome_status_check CHECK (status IN ('processed', 'skipped', 'failed')),
    processed_at timestamptz NULL,
    resource_key text        NULL,
    stale        boolean     NULL,
    last_error   text        NULL,
    PRIMARY KEY (inbox_id)
) PARTITION BY RANGE (inbox_id);
CREATE INDEX inbox_outcome_resource_idx ON inbox_outcome (resource_key, inbox_id) WHERE resource_key IS NOT NULL;
CREATE INDEX inbox_outcome_status_idx ON inbox_outcome (status, inbox_id) WHERE status <> 'processed';

-- Matching indexes of the old tables become the new ones' partitions:
-- attaching builds nothing.
DO $$
DECLARE
    below bigint := current_setting('hookinbox.inbox_below')::bigint;
BEGIN
    EXECUTE format('ALTER TABLE inbox ATTACH PARTITION inbox_p0 FOR VALUES FROM (MINVALUE) TO (%s)', below);
    EXECUTE format('ALTER TABLE inbox_outcome ATTACH PARTITION inbox_outcome_p0 FOR VALUES FROM (MINVALUE) TO (%s)', below);
END
$$;
ALTER TABLE inbox_p0 DROP CONSTRAINT inbox_id_below;
ALTER TABLE inbox_outcome_p0 DROP CONSTRAINT inbox_outcome_id_below;

-- Creates the partitions of inbox and inbox_outcome for ids [lo, hi). Each
-- is made apart and attached, which holds no writes (CREATE TABLE ...
-- PARTITION OF would take an exclusive lock of the whole inbox); the CHECK
-- constraint spares ATTACH a scan.
CREATE FUNCTION inbox_partition_create(lo bigint, hi bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    p text := 'inbox_p' || lo;
    o text := 'inbox_outcome_p' || lo;
BEGIN
    EXECUTE format('CREATE TABLE %I (LIKE inbox INCLUDING DEFAULTS INCLUDING STORAGE)', p);
    EXECUTE format('ALTER TABLE %I ALTER COLUMN payload SET STATISTICS 0, ALTER COLUMN headers SET STATISTICS 0', p);
    -- pg_attribute.attcompression exists from PostgreSQL 14 on.
    IF current_setting('server_version_num')::int >= 140000 THEN
        IF (SELECT attcompression FROM pg_attribute WHERE attrelid = 'inbox'::regclass AND attname = 'payload') = 'l' THEN
            EXECUTE format('ALTER TABLE %I ALTER COLUMN payload SET COMPRESSION lz4', p);
        END IF;
    END IF;
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (id >= %s AND id < %s)', p, p || '_range', lo, hi);
    EXECUTE format('ALTER TABLE inbox ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%s)', p, lo, hi);
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', p, p || '_range');

    EXECUTE format('CREATE TABLE %I (LIKE inbox_outcome INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', o);
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (inbox_id >= %s AND inbox_id < %s)', o, o || '_range', lo, hi);
    EXECUTE format('ALTER TABLE inbox_outcome ATTACH PARTITION %I FOR VALUES FROM (%s) TO (%s)', o, lo, hi);
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', o, o || '_range');
END
$$;

-- Where ids land when no range partition is ready for them (the job that
-- makes them ahead was stopped for long): ingest never fails for want of
-- a partition. Rows here are deleted by batches, as before.
CREATE TABLE inbox_overflow PARTITION OF inbox DEFAULT;
CREATE TABLE inbox_outcome_overflow PARTITION OF inbox_outcome DEFAULT;

-- The first partition for new deliveries. The partition job sizes the
-- ones after it by the traffic (internal/inbox/partitions.go).
SELECT inbox_partition_create(current_setting('hookinbox.inbox_below')::bigint,
                              current_setting('hookinbox.inbox_below')::bigint + 1000000);

-- The view reads the new tables (it was bound to the old ones).
CREATE OR REPLACE VIEW delivery AS
SELECT i.id, i.source, i.delivery_id, i.event_type, i.occurred_at, i.headers, i.payload, i.payload_sha256,
       i.received_at, i.origin,
       CASE WHEN p.inbox_id IS NULL THEN coalesce(o.status, 'received') ELSE 'received' END AS status,
       o.processed_at, o.resource_key, o.stale,
       coalesce(p.last_error, o.last_error) AS last_error
FROM inbox i
LEFT JOIN inbox_pending p ON p.inbox_id = i.id
LEFT JOIN inbox_outcome o ON o.inbox_id = i.id;
