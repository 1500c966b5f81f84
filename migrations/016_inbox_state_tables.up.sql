-- A delivery's processing state moves off its inbox row into two narrow
-- tables, so the inbox row is written once, by ingest, and never updated.
--
-- Closing a delivery used to rewrite its inbox row: a non-HOT update (status
-- and resource_key are indexed) that copied the row, its inline payload
-- included, and inserted into five indexes: about 1 kB of WAL a delivery,
-- 2.35 kB right after a checkpoint, and a dead row per delivery for
-- autovacuum to prune, whose full-page images were most of the WAL bursts
-- that made the slowest acks at moderate load (bench/README.md). Now a delivery's state is a row inserted into inbox_pending by
-- the ingest statement, deleted and replaced by a row of inbox_outcome when
-- it is processed.
--
-- The view `delivery` is the inbox with each row's state, as the inbox's
-- columns used to be: status, processed_at, resource_key, stale and
-- last_error.

-- Both tables repeat the inbox row's source, event_type and received_at
-- (which never change), so that a filter on status and those (a bulk
-- replay's, its preview's) reads one table: joined to the inbox, a
-- preview of the processed deliveries among a million took 0.37-0.83 s
-- against 43 ms on the inbox's own status column (bench/README.md).

-- Deliveries no run has decided yet (status received): ingest inserts the
-- row in the statement that inserts the inbox row, so the table holds the
-- backlog and stays as small as it is. last_error is the last failed
-- attempt's, while retries remain.
CREATE TABLE inbox_pending (
    inbox_id    bigint      PRIMARY KEY,
    source      text        NOT NULL,
    event_type  text        NOT NULL,
    received_at timestamptz NOT NULL,
    last_error  text        NULL
);

-- What processing decided: processed or skipped (processed_at, and what
-- the handlers found: the resource and whether the delivery was stale), or
-- failed after its last attempt (processed_at is null, unless an earlier
-- run had processed it and a replay failed). A replay that
-- processes the delivery again replaces the row's values; one that fails
-- records its error on it. No foreign key: the KEY SHARE lock its check
-- takes would write to the inbox row this table exists not to write;
-- retention deletes the row with its delivery.
CREATE TABLE inbox_outcome (
    inbox_id     bigint      PRIMARY KEY,
    source       text        NOT NULL,
    event_type   text        NOT NULL,
    received_at  timestamptz NOT NULL,
    status       text        NOT NULL CHECK (status IN ('processed', 'skipped', 'failed')),
    processed_at timestamptz NULL,
    resource_key text        NULL,
    stale        boolean     NULL,
    last_error   text        NULL
);
-- One resource's deliveries (the admin API's and console's resource filter).
CREATE INDEX inbox_outcome_resource_idx ON inbox_outcome (resource_key, inbox_id) WHERE resource_key IS NOT NULL;
-- The statuses that stay small (skipped, failed), as inbox_status_idx did.
CREATE INDEX inbox_outcome_status_idx ON inbox_outcome (status, inbox_id) WHERE status <> 'processed';

INSERT INTO inbox_pending (inbox_id, source, event_type, received_at, last_error)
SELECT id, source, event_type, received_at, last_error FROM inbox WHERE status = 'received';
INSERT INTO inbox_outcome (inbox_id, source, event_type, received_at, status, processed_at, resource_key, stale, last_error)
SELECT id, source, event_type, received_at, status, processed_at, resource_key, stale, last_error FROM inbox WHERE status <> 'received';

-- Dropping the columns drops their indexes (inbox_status_idx,
-- inbox_source_resource_idx) and the status CHECK. It rewrites nothing: the
-- old rows keep the bytes until they are deleted.
ALTER TABLE inbox
    DROP COLUMN status,
    DROP COLUMN processed_at,
    DROP COLUMN last_error,
    DROP COLUMN resource_key,
    DROP COLUMN stale;

-- The inbox with its state. status: received while the delivery is pending
-- (or, should neither row exist, never decided); else the outcome's.
CREATE VIEW delivery AS
SELECT i.id, i.source, i.delivery_id, i.event_type, i.occurred_at, i.headers, i.payload, i.payload_sha256,
       i.received_at, i.origin,
       CASE WHEN p.inbox_id IS NULL THEN coalesce(o.status, 'received') ELSE 'received' END AS status,
       o.processed_at, o.resource_key, o.stale,
       coalesce(p.last_error, o.last_error) AS last_error
FROM inbox i
LEFT JOIN inbox_pending p ON p.inbox_id = i.id
LEFT JOIN inbox_outcome o ON o.inbox_id = i.id;
