-- Partitions a drop detached from inbox, inbox_outcome and inbox_key and
-- has not dropped yet (the process stopped between the two): tables beside
-- the inbox that are no longer partitions and carry the drop's comment ($1).
SELECT c.relname
FROM pg_class c
WHERE c.relkind = 'r' AND NOT c.relispartition
  AND c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = 'inbox'::regclass)
  AND c.relname ~ '^inbox_(p|outcome_p|key_g)[0-9]+$'
  AND obj_description(c.oid, 'pg_class') = $1
