-- Unfinished sends of destinations no longer configured fail for good,
-- visibly, instead of holding their deliveries from retention forever.
UPDATE destination_send
SET state = 'failed', last_error = 'destination ' || destination || ' is no longer configured',
    finished_at = now(), claimed_by = NULL, claimed_until = NULL
WHERE state IN ('waiting', 'pending', 'held') AND destination <> ALL(@destinations::text[])
