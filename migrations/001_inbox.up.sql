-- The inbox: one row per delivery a provider made to us. The unique
-- constraint on (source, delivery_id) is what decides a duplicate; ingest
-- never asks "does it exist?" before inserting.
CREATE TABLE inbox (
    id             bigserial   PRIMARY KEY,
    source         text        NOT NULL,
    delivery_id    text        NOT NULL,
    event_type     text        NOT NULL,
    occurred_at    timestamptz NULL,
    headers        jsonb       NOT NULL DEFAULT '{}',
    payload        bytea       NOT NULL,
    payload_sha256 bytea       NOT NULL,
    received_at    timestamptz NOT NULL DEFAULT now(),
    status         text        NOT NULL DEFAULT 'received',
    processed_at   timestamptz NULL,
    last_error     text        NULL,
    CONSTRAINT inbox_source_delivery_id_key UNIQUE (source, delivery_id),
    CONSTRAINT inbox_status_check CHECK (status IN ('received', 'processed', 'skipped', 'failed'))
);

-- Retention deletes by age.
CREATE INDEX inbox_received_at_idx ON inbox (received_at);
