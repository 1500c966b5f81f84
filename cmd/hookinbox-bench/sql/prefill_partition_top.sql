-- The id the prefill's next row takes, and the upper bound of the inbox's
-- highest range partition (NULL when there is none).
SELECT (SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM inbox_id_seq),
       (SELECT max((regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \(''?(\d+)''?\)'))[1]::bigint)
        FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid
        WHERE h.inhparent = 'inbox'::regclass)
