-- This process (@id) runs the configuration fingerprint. A configuration
-- that no process has said so of for @live_secs starts afresh when a
-- process starting (@first, its first publish) says so: deployed again (a
-- rollback), it is the newest. A running process's later publish never
-- moves it: after a database outage or a failover every configuration has
-- been silent that long, and whichever published first after it would
-- otherwise become the newest, an older one too. One a live process runs
-- keeps its first sighting, so a replica of an older configuration that
-- restarts does not become the newest. The process's own row (worker_process) is
-- written in the same statement, so that a configuration a process of
-- this binary runs is never seen without its process. Configurations
-- gone for a day, and processes gone for an hour, are forgotten: the
-- tables hold what runs and what ran lately, not every start.
WITH forgotten AS (
    DELETE FROM worker_config WHERE seen_at < now() - interval '1 day'
), gone AS (
    DELETE FROM worker_process WHERE live_until < now() - interval '1 hour' AND id <> @id
), process AS (
    INSERT INTO worker_process (id, host, fingerprint, seen_at, live_until)
    VALUES (@id, @host, @fingerprint, now(), now() + @live_secs::float8 * interval '1 second')
    ON CONFLICT (id) DO UPDATE SET
        seen_at = now(),
        live_until = now() + @live_secs::float8 * interval '1 second'
)
INSERT INTO worker_config (fingerprint, first_seen_at, seen_at)
VALUES (@fingerprint, now(), now())
ON CONFLICT (fingerprint) DO UPDATE SET
    seen_at = now(),
    first_seen_at = CASE WHEN @first::boolean
                          AND worker_config.seen_at < now() - @live_secs::float8 * interval '1 second'
                         THEN now() ELSE worker_config.first_seen_at END
