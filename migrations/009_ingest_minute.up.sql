-- Webhook requests per source, minute and outcome (accepted, duplicate,
-- conflict, invalid_signature, unavailable, …), for the console's charts.
-- A 4xx writes nothing to the inbox, so only a counter can show it. Ingest
-- counts in memory and adds its counts here every few seconds, outside the
-- inbox transaction (ingest/tally.go); replicas add to the same rows.
-- Retention keeps two days. Its size does not grow with the inbox:
-- sources × outcomes × 2,880 minutes at most.
CREATE TABLE ingest_minute (
    minute  timestamptz NOT NULL,
    source  text        NOT NULL,
    outcome text        NOT NULL,
    count   bigint      NOT NULL,
    PRIMARY KEY (minute, source, outcome)
);
