-- Ordered sends waiting to be put in their resources' lines (enqueued by
-- processing, or reset by an operator's retry) are put there, oldest
-- first: the first of a resource whose turn is free takes the turn and is
-- made due; every other waits behind the send in progress, which hands
-- the turn on when it is done (chain_finish_many.sql). The caller holds
-- the destination's state row, which this version's senders take before
-- any turn row, so none of them hands a turn on meanwhile. A resource's
-- row is made if it is not there (retention deletes idle ones) and locked
-- either way: ON CONFLICT DO UPDATE locks the row it finds and reads it
-- as it is now, not as the statement's snapshot saw it, and takes the
-- turn only if it is free. An older replica, during a rolling deploy,
-- takes and hands on turns under the turn's row alone: a send it made due
-- after this statement's snapshot is left as it is (the last line's
-- check, made on the row as it is now).
WITH arrived AS MATERIALIZED (
    SELECT id, source, resource_key
    FROM destination_send
    WHERE destination = @destination AND state = 'waiting' AND NOT in_line
    ORDER BY id
    LIMIT @limit
), first AS MATERIALIZED (
    SELECT DISTINCT ON (source, resource_key) id, source, resource_key
    FROM arrived
    ORDER BY source, resource_key, id
), taken AS (
    INSERT INTO destination_resource AS r (destination, source, resource_key, busy)
    SELECT @destination, source, resource_key, true FROM first ORDER BY source, resource_key
    ON CONFLICT (destination, source, resource_key) DO UPDATE SET busy = true, updated_at = now()
    WHERE NOT r.busy
    RETURNING r.source, r.resource_key
)
UPDATE destination_send s
SET in_line = true,
    state = CASE WHEN t.source IS NULL THEN 'waiting' ELSE 'pending' END,
    next_attempt_at = CASE WHEN t.source IS NULL THEN s.next_attempt_at ELSE now() END
FROM arrived a
LEFT JOIN first f ON f.id = a.id
LEFT JOIN taken t ON t.source = f.source AND t.resource_key = f.resource_key
WHERE s.id = a.id AND s.state = 'waiting' AND NOT s.in_line
  -- Bounds a scan of the destination's sends not yet in line to those
  -- read above, whatever the backlog behind them: the sender plans this
  -- statement without nested loops (queueLineUp), so the sends are not
  -- looked up one by one.
  AND s.destination = @destination AND s.id <= (SELECT max(id) FROM arrived)
