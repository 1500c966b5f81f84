-- Adds a flush's counts; every replica adds to the same rows.
INSERT INTO ingest_minute (minute, source, outcome, count)
SELECT minute, source, outcome, count
FROM unnest(@minutes::timestamptz[], @sources::text[], @outcomes::text[], @counts::bigint[])
    AS t (minute, source, outcome, count)
ON CONFLICT (minute, source, outcome) DO UPDATE SET count = ingest_minute.count + excluded.count
