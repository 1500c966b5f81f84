-- Views over the inbox for the statements of other packages that read it
-- in the statement that reads their own tables: the alert rules (every
-- rule in one statement, internal/alerts/sql/conditions.sql), a
-- destination's claim (its sends with their bodies,
-- internal/destination/sql/send_claim.sql) and the metrics' table sizes
-- (internal/metrics/sql/tables.sql). They read these views, never the
-- inbox's tables, so that the tables change with internal/inbox alone (its
-- package comment describes both).
--
-- Each is a plain view, which the planner expands into the statement that
-- reads it: the statements' plans are the ones they had over the tables
-- (the counts add a projection above the same aggregate).
--
-- Views only: no table is rewritten, and each CREATE VIEW takes the lock
-- a read takes on the tables it reads, which neither ingest nor
-- processing waits for.

-- A stored delivery's request as a destination forwards it: its body byte
-- for byte, its Content-Type, its headers as received (credentials
-- dropped) and when it was received. A header's name is stored as its
-- sender spelled it: a webhook's is canonical (Content-Type), a Kafka
-- producer's often lower case (content-type). The Content-Type is found
-- whatever its case, as handlers and a route's filter find it; the
-- canonical name is read first, so a webhook's costs no scan.
CREATE VIEW delivery_request AS
SELECT i.id, i.payload,
       coalesce(i.headers->'Content-Type'->>0,
                (SELECT h.value->>0 FROM jsonb_each(i.headers) h
                 WHERE lower(h.key) = 'content-type' ORDER BY h.key LIMIT 1)) AS content_type,
       i.headers, i.received_at
FROM inbox i;

-- The deliveries a sender sent, by webhook or through Kafka: not those a
-- recovery read from a provider's API. A source's latest tells how long it
-- has been silent.
CREATE VIEW delivery_received AS
SELECT i.source, i.received_at
FROM inbox i
WHERE i.origin IN ('webhook', 'kafka');

-- The deliveries of each source that failed for good (their last attempt
-- failed), while the inbox keeps them.
CREATE VIEW delivery_failed_count AS
SELECT o.source, count(*) AS deliveries
FROM inbox_outcome o
WHERE o.status = 'failed'
GROUP BY o.source;

-- The deliveries no processing run has decided yet: the backlog.
CREATE VIEW delivery_backlog AS
SELECT count(*) AS deliveries
FROM inbox_pending;

-- The disk the inbox takes, for the metrics' scrape: the inbox, its keys
-- and its state tables, each with every partition, with their indexes and
-- TOAST, and when its oldest delivery was received, which tells whether
-- retention keeps up. A partitioned table has no storage of its own (its
-- own size is 0), and a table not partitioned (inbox_pending, the backlog)
-- has no partition tree, so each table counts itself and its tree.
CREATE VIEW delivery_storage AS
SELECT (SELECT sum(pg_total_relation_size(t.rel))
        FROM unnest(ARRAY['inbox', 'inbox_key', 'inbox_pending', 'inbox_outcome']::regclass[]) AS r (rel),
             LATERAL (SELECT r.rel UNION SELECT p.relid FROM pg_partition_tree(r.rel) p) AS t (rel))::bigint AS bytes,
       (SELECT min(i.received_at) FROM inbox i) AS oldest_received_at;
