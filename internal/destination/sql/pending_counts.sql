-- Unfinished sends per destination (metrics).
SELECT destination, count(*)::float8 FROM destination_send
WHERE state IN ('waiting', 'pending', 'held') AND destination = ANY(@destinations)
GROUP BY destination
