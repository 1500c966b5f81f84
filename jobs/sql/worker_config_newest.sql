-- The newest configuration a live process runs (first seen last; NULL if
-- none), and when the look began: a process whose look began after
-- another's first publish committed has seen that publish.
SELECT now() AS looked_at, (
    SELECT fingerprint FROM worker_config
    WHERE seen_at > now() - @live_secs::float8 * interval '1 second'
    ORDER BY first_seen_at DESC, fingerprint
    LIMIT 1
) AS newest
