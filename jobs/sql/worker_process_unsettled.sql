-- The processes of other configurations that may still process
-- deliveries without @fingerprint: those live at @since (when this
-- process's first publish had committed) that have not shown they saw it.
-- A process has shown it with a look begun since (it saw @fingerprint or
-- something newer), or with a look that found @fingerprint the newest
-- after @fingerprint was first seen: a process resumes processing only
-- once a look finds @fingerprint run nowhere, and a publish after that
-- moves first_seen_at past such a look. `silent` ones have not said they
-- run for their live window: gone.
SELECT p.id, p.host, p.fingerprint, p.live_until < now() AS silent
FROM worker_process p
LEFT JOIN worker_config mine ON mine.fingerprint = @fingerprint
WHERE p.fingerprint <> @fingerprint
  AND p.live_until > @since::timestamptz
  AND (p.looked_at >= @since::timestamptz) IS NOT TRUE
  AND (p.newest = @fingerprint AND p.looked_at >= mine.first_seen_at) IS NOT TRUE
UNION ALL
-- Configurations a live process of an older binary runs, which records no
-- looks: left two of its looks, the wait this binary's own took before
-- it recorded them.
SELECT '', '', c.fingerprint, false
FROM worker_config c
WHERE c.fingerprint <> @fingerprint
  AND c.seen_at > now() - @live_secs::float8 * interval '1 second'
  AND now() < @since::timestamptz + @legacy_secs::float8 * interval '1 second'
  AND NOT EXISTS (
      SELECT 1 FROM worker_process p
      WHERE p.fingerprint = c.fingerprint AND p.live_until > now()
  )
ORDER BY 3, 1
