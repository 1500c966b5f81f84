-- The inbox's range partitions with their bounds as PostgreSQL prints
-- them: '123', or MINVALUE for the first. Not the overflow (DEFAULT).
SELECT c.relname, b[1], b[2]
FROM pg_inherits h
JOIN pg_class c ON c.oid = h.inhrelid
CROSS JOIN LATERAL regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \((.+)\) TO \((.+)\)') AS b
WHERE h.inhparent = 'inbox'::regclass AND b IS NOT NULL
