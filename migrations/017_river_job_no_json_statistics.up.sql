-- ANALYZE samples up to 30,000 river_job rows and builds statistics for
-- every column. hookinbox never filters, joins or sorts on a job's args,
-- metadata, attempted_by, errors or tags (a delivery's jobs are found by
-- the expression index on args->>'inbox_id', whose statistics ANALYZE
-- still builds from the index), and River does only in a JobList filter,
-- which scans since 014. Yet they were about 40% of an ANALYZE river_job:
-- on 28,914 jobs after a steady run, 124–158 ms with their statistics and
-- 79–87 ms without (analyzed one by one on 27,940 jobs: args 54 ms,
-- metadata 29, attempted_by 20, errors 9, tags 6, the id alone 36).
-- Autoanalyze of river_job runs often (a job's row is written three
-- times) and, on a small machine, beside ingest: in the steady benchmark
-- the acks due during it were among the step's slowest (bench/README.md). The planner uses its defaults for these columns, as for any
-- column without statistics.
ALTER TABLE river_job
    ALTER COLUMN args SET STATISTICS 0,
    ALTER COLUMN metadata SET STATISTICS 0,
    ALTER COLUMN attempted_by SET STATISTICS 0,
    ALTER COLUMN errors SET STATISTICS 0,
    ALTER COLUMN tags SET STATISTICS 0;
