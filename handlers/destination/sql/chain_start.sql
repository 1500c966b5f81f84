-- A waiting ordered send, named by its key, is made due if its resource's
-- turn is free, and takes the turn; otherwise it stays waiting, and the
-- send in progress hands the turn on when it is done
-- (chain_finish_many.sql). The resource's row is locked
-- (chain_claim.sql), so the send and the turn are read as they are. Only
-- an ordered send of this resource: a replay whose resource is read
-- differently now (its source's resource field changed) takes no turn.
WITH w AS (
    SELECT id FROM destination_send
    WHERE source = @source AND delivery_id = @delivery_id AND destination = @destination AND state = 'waiting'
      AND ordered AND resource_key = @resource_key
), turn AS (
    UPDATE destination_resource SET busy = true, updated_at = now()
    WHERE destination = @destination AND source = @source AND resource_key = @resource_key
      AND NOT busy AND EXISTS (SELECT 1 FROM w)
    RETURNING 1
)
UPDATE destination_send s SET state = 'pending', next_attempt_at = now()
FROM w
WHERE s.id = w.id AND EXISTS (SELECT 1 FROM turn)
