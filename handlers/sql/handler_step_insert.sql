-- The primary key decides: a step recorded by a committed earlier run makes
-- this insert do nothing, and the caller enqueues nothing.
INSERT INTO handler_step (key, source, delivery_id, handler, step)
VALUES (@key, @source, @delivery_id, @handler, @step)
ON CONFLICT (key) DO NOTHING
RETURNING key
