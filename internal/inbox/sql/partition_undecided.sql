-- Whether the partition [@lo, @hi) holds a delivery that is neither
-- processed nor skipped: each of its rows must have such an outcome row.
-- The inbox's count reads its primary key; the outcomes' reads their
-- partition (narrow rows), once per pass for a partition due to go.
SELECT (SELECT count(*) FROM inbox WHERE id >= @lo AND id < @hi)
    <> (SELECT count(*) FROM inbox_outcome WHERE inbox_id >= @lo AND inbox_id < @hi AND status IN ('processed', 'skipped'))
