SELECT queue, state::text, count(*)::float8
FROM river_job
GROUP BY queue, state
