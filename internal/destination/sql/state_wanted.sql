-- A sender found every slot taken by others (@wanted_by set), or got
-- its slot (@wanted_by null: clears its own mark only).
UPDATE destination_state
SET wanted_by = @wanted_by, wanted_until = clock_timestamp() + @ttl::interval
WHERE destination = @destination AND (@wanted_by::text IS NOT NULL OR wanted_by = @instance)
