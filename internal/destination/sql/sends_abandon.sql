-- An operator fails the unfinished sends of a destination no running
-- process has (known.go checks that under the state row's lock), so that
-- their deliveries are no longer held from retention. Its resources'
-- turns are freed with them: the destination configured again starts its
-- ordered sends afresh (a failed send can be retried).
WITH freed AS (
    UPDATE destination_resource SET busy = false, updated_at = now()
    WHERE busy AND destination = @destination
)
UPDATE destination_send
SET state = 'failed', last_error = 'failed by an operator: destination ' || destination || ' is configured on no running process',
    finished_at = now()
WHERE state IN ('waiting', 'pending', 'held') AND destination = @destination
