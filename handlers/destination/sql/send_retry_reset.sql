-- A failed send starts over: the same key, a fresh retry schedule and age.
UPDATE destination_send
SET state = 'waiting', attempts = 0, created_at = now(), finished_at = NULL
WHERE id = @id
