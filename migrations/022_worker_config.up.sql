-- The configurations of processing that running workers have: what
-- handlers run and which destinations a delivery is routed to. During a
-- rolling deploy processes of two configurations share the database; the
-- one first seen last is the newest, and a worker of another leaves
-- processing to it (jobs/generation.go), so that every delivery received
-- once the new configuration runs is processed by it.
CREATE TABLE worker_config (
    fingerprint   text        PRIMARY KEY,
    first_seen_at timestamptz NOT NULL,
    seen_at       timestamptz NOT NULL
);
