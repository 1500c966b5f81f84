-- Partitions a drop detached from inbox and inbox_outcome and has not
-- dropped yet (the process stopped between the two): tables beside the
-- inbox that are no longer partitions and carry the drop's comment ($1).
SELECT c.relname
FROM pg_class c
WHERE c.relkind = 'r' AND NOT c.relispartition
  AND c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = 'inbox'::regclass)
  AND c.relname ~ '^inbox(_outcome)?_p[0-9]+$'
  AND obj_description(c.oid, 'pg_class') = $1
