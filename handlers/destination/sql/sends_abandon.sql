-- Unfinished sends of destinations no longer configured fail for good,
-- visibly, instead of holding their deliveries from retention forever.
-- Their resources' turns are freed with them: a destination configured
-- again starts its ordered sends afresh (a failed send can be retried).
WITH freed AS (
    UPDATE destination_resource SET busy = false, updated_at = now()
    WHERE busy AND destination <> ALL(@destinations::text[])
)
UPDATE destination_send
SET state = 'failed', last_error = 'destination ' || destination || ' is no longer configured',
    finished_at = now(), claimed_by = NULL, claimed_until = NULL
WHERE state IN ('waiting', 'pending', 'held') AND destination <> ALL(@destinations::text[])
