SELECT id, headers, payload
FROM inbox
WHERE id = ANY(@ids::bigint[])
