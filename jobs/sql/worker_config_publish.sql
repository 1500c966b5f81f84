-- This process runs the configuration fingerprint. A configuration that
-- no process has said so of for @live_secs starts afresh: deployed again
-- (a rollback), it is the newest. One a live process runs keeps its
-- first sighting, so a replica of an older configuration that restarts
-- does not become the newest. Rows gone for a day are forgotten.
WITH forgotten AS (
    DELETE FROM worker_config WHERE seen_at < now() - interval '1 day'
)
INSERT INTO worker_config (fingerprint, first_seen_at, seen_at)
VALUES (@fingerprint, now(), now())
ON CONFLICT (fingerprint) DO UPDATE SET
    seen_at = now(),
    first_seen_at = CASE WHEN worker_config.seen_at < now() - @live_secs::float8 * interval '1 second'
                         THEN now() ELSE worker_config.first_seen_at END
