-- The console's charts: webhook requests per minute, source and outcome
-- since a time, through ingest_minute's primary key (minute first).
SELECT minute, source, outcome, count
FROM ingest_minute
WHERE minute >= @since
ORDER BY minute
