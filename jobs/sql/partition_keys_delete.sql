-- One batch of the keys of partition [@from, @hi), in id order: returns
-- the last id it covered (null when none was left) and how many keys it
-- deleted. A key is deleted only with the row it names: a later delivery
-- of the same id has its own.
WITH p AS (
    SELECT id, source, delivery_id FROM inbox WHERE id >= @from AND id < @hi ORDER BY id LIMIT @batch
), gone AS (
    DELETE FROM inbox_key k USING p
    WHERE k.source = p.source AND k.delivery_id = p.delivery_id AND k.inbox_id = p.id
    RETURNING 1
)
SELECT (SELECT max(id) FROM p), (SELECT count(*) FROM gone)
