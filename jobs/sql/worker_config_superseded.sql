-- The newest configuration a live process runs, if it is newer than
-- @fingerprint, asked before this process says it runs @fingerprint: only
-- when a live process runs @fingerprint too, since otherwise this
-- process's first publish makes it the newest (worker_config_publish.sql).
-- No row: not superseded.
SELECT other.fingerprint
FROM worker_config mine
JOIN worker_config other
  ON other.fingerprint <> mine.fingerprint
 AND other.seen_at > now() - @live_secs::float8 * interval '1 second'
 AND (other.first_seen_at, other.fingerprint) > (mine.first_seen_at, mine.fingerprint)
WHERE mine.fingerprint = @fingerprint
  AND mine.seen_at > now() - @live_secs::float8 * interval '1 second'
ORDER BY other.first_seen_at DESC, other.fingerprint
LIMIT 1
