-- This process has these destinations configured and is sending to them.
INSERT INTO destination_state (destination, seen_at)
SELECT unnest(@destinations::text[]), now()
ON CONFLICT (destination) DO UPDATE SET seen_at = excluded.seen_at
