-- Whether the partition [@lo, @hi) holds a delivery that is neither
-- processed nor skipped: each of its rows must have such an outcome row.
-- Index-only counts of both.
SELECT (SELECT count(*) FROM inbox WHERE id >= @lo AND id < @hi)
    <> (SELECT count(*) FROM inbox_outcome WHERE inbox_id >= @lo AND inbox_id < @hi AND status IN ('processed', 'skipped'))
