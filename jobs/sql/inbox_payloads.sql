SELECT id, payload
FROM inbox
WHERE id = ANY(@ids::bigint[])
