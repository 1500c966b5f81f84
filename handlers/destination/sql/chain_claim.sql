-- One (destination, resource)'s row, made if it is not there and locked
-- to the transaction's end either way (ON CONFLICT DO UPDATE locks the row
-- it finds even when its WHERE fails, and writes nothing then): a send
-- finishing meanwhile (chain_finish_many.sql) waits, then sees the send
-- this transaction enqueued; and the next statement (chain_start.sql)
-- sees every turn handed on or freed before. A row retention deletes
-- meanwhile is made again.
INSERT INTO destination_resource (destination, source, resource_key, busy)
VALUES (@destination, @source, @resource_key, false)
ON CONFLICT (destination, source, resource_key) DO UPDATE SET busy = destination_resource.busy
WHERE false
