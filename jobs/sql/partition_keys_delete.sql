-- The keys of a dropped partition's ids [@from, @to), a window of its
-- range, through the BRIN index on inbox_id, and the range's progress past
-- them, together: returns how many keys it deleted. Every delivery of
-- those ids went with the partition (an id is taken once).
WITH gone AS (
    DELETE FROM inbox_key WHERE inbox_id >= @from AND inbox_id < @to
    RETURNING 1
), moved AS (
    UPDATE inbox_retired SET next = @to WHERE lo = @lo
)
SELECT count(*) FROM gone
