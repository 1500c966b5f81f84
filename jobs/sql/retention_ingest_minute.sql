-- The console's per-minute ingest counts: a few thousand rows a day per
-- source, deleted in one statement.
DELETE FROM ingest_minute WHERE minute < @cutoff
