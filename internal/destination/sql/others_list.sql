-- Destinations this process does not have that still have unfinished
-- sends (through their partial index), and whether a running process has
-- said lately that it has them.
SELECT s.destination, count(*), coalesce(st.seen_at > now() - @live_secs::float8 * interval '1 second', false)
FROM destination_send s
LEFT JOIN destination_state st ON st.destination = s.destination
WHERE s.state IN ('waiting', 'pending', 'held') AND s.destination <> ALL(@destinations::text[])
GROUP BY s.destination, st.seen_at
ORDER BY s.destination
