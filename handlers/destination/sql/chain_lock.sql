-- One (destination, resource)'s row, locked to the transaction's end: a
-- send finishing meanwhile (chain_finish_many.sql) waits, then sees the
-- send this transaction enqueued; and the next statement
-- (chain_start.sql) sees every turn handed on or freed before.
SELECT 1 FROM destination_resource
WHERE destination = @destination AND source = @source AND resource_key = @resource_key
FOR UPDATE
