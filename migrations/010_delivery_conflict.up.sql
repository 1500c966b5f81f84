-- Every webhook refused with 409 delivery_id_conflict: a delivery id the
-- inbox already holds, sent again with another body. The one write a 4xx
-- makes, and never into the inbox: ingest inserts it in a statement of its
-- own once the inbox transaction decided the conflict, so an operator can
-- compare the two bodies (the console's Conflicts page). The body is kept
-- up to 64 KiB (body_size is its full length). Retention keeps 7 days.
CREATE TABLE delivery_conflict (
    id             bigserial   PRIMARY KEY,
    source         text        NOT NULL,
    delivery_id    text        NOT NULL,
    inbox_id       bigint      NULL,     -- the stored delivery; no foreign key: retention may delete it first
    received_at    timestamptz NOT NULL DEFAULT now(),
    payload_sha256 bytea       NOT NULL, -- of the whole body
    headers        jsonb       NOT NULL, -- as the inbox stores them (credentials dropped)
    body           bytea       NOT NULL,
    body_size      integer     NOT NULL
);
CREATE INDEX delivery_conflict_received_at_idx ON delivery_conflict (received_at);
