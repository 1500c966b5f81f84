-- Where the inbox's range partitions end: the next one starts there.
SELECT max((regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \(''(\d+)''\)'))[1]::bigint)
FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid
WHERE h.inhparent = 'inbox'::regclass
