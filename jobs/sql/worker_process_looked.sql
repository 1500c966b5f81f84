-- This process (@id) applied a look that began at @looked_at and found
-- @newest the newest configuration: if @newest is not its own, it had
-- stopped fetching processing jobs when this was written.
UPDATE worker_process SET looked_at = @looked_at::timestamptz, newest = @newest
WHERE id = @id
