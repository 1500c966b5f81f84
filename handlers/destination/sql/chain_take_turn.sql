-- Makes a waiting ordered send due if its (destination, resource)'s turn
-- is free, and takes the turn; otherwise the send stays waiting, and the
-- send in progress hands the turn on when it is done
-- (chain_finish_many.sql). ON CONFLICT DO UPDATE locks the row it finds
-- even when its WHERE fails, and reads the row's latest version: a turn
-- freed by a transaction that committed while this one waited is taken,
-- and a send finishing after this one waits for it to commit, then sees
-- this send waiting.
WITH turn AS (
    INSERT INTO destination_resource (destination, source, resource_key, busy)
    VALUES (@destination, @source, @resource_key, true)
    ON CONFLICT (destination, source, resource_key) DO UPDATE SET busy = true, updated_at = now()
    WHERE NOT destination_resource.busy
    RETURNING 1
)
UPDATE destination_send SET state = 'pending', next_attempt_at = now()
WHERE id = @id AND EXISTS (SELECT 1 FROM turn)
