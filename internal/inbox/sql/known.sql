-- Which of these delivery ids the inbox already holds for a source. One
-- query for the whole pass, however many deliveries GitHub reports failed.
SELECT delivery_id
FROM inbox_key
WHERE source = $1
  AND delivery_id = ANY($2)
