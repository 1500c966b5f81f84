-- ANALYZE samples up to 30,000 inbox rows and builds statistics for every
-- column: payload (a few KB each, decompressed) and headers (jsonb) too.
-- No query filters, joins or sorts on either, so the planner never reads
-- those statistics; they only cost autoanalyze CPU, which on a small
-- machine runs beside ingest (in the steady benchmark an autoanalyze of
-- inbox took 0.5 s of CPU, in the middle of a step). On 100,000 rows of
-- 2–8 KB GitHub payloads: ANALYZE inbox 230 ms → 74 ms (bench/README.md).
ALTER TABLE inbox
    ALTER COLUMN payload SET STATISTICS 0,
    ALTER COLUMN headers SET STATISTICS 0;
