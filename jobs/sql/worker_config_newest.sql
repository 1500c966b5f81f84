-- The newest configuration a live process runs: first seen last.
SELECT fingerprint FROM worker_config
WHERE seen_at > now() - @live_secs::float8 * interval '1 second'
ORDER BY first_seen_at DESC, fingerprint
LIMIT 1
