-- What processing found the delivery to be about (handlers' resource key),
-- so operators can list one resource's deliveries.
ALTER TABLE inbox ADD COLUMN resource_key text NULL;
CREATE INDEX inbox_source_resource_idx ON inbox (source, resource_key) WHERE resource_key IS NOT NULL;
CREATE INDEX inbox_status_idx ON inbox (status, id) WHERE status <> 'processed';

-- A delivery's processing jobs, for its detail page. River's own indexes do
-- not cover args.
CREATE INDEX river_job_process_delivery_inbox_idx ON river_job (((args->>'inbox_id')::bigint))
    WHERE kind = 'process_delivery';

-- The Idempotency-Key contract of the admin API. The primary key decides
-- which request runs; the outcome is stored in the operation's own
-- transaction, so it exists exactly when the operation's effects do.
CREATE TABLE api_idempotency (
    scope           text        NOT NULL, -- the caller (a hash of its token)
    operation       text        NOT NULL, -- the route's name
    idempotency_key text        NOT NULL,
    request_hash    bytea       NOT NULL,
    state           text        NOT NULL CHECK (state IN ('in_progress', 'completed')),
    lock_token      text        NULL,     -- who holds an in_progress row
    status_code     integer     NULL,
    response_body   bytea       NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    locked_until    timestamptz NULL,
    expires_at      timestamptz NOT NULL,
    PRIMARY KEY (scope, operation, idempotency_key)
);
CREATE INDEX api_idempotency_expires_at_idx ON api_idempotency (expires_at);

-- Bulk replays. The matching inbox ids are taken when the replay is
-- created, so what is replayed is what the filter selected then, whatever
-- processing changes meanwhile. The job that enqueues batches moves the
-- position in the same transaction as each batch, so a crashed job resumes
-- without enqueueing anything twice.
CREATE TABLE bulk_replay (
    id          bigserial   PRIMARY KEY,
    filter      jsonb       NOT NULL,
    inbox_ids   bigint[]    NOT NULL,
    position    integer     NOT NULL DEFAULT 0, -- inbox_ids handled so far
    enqueued    integer     NOT NULL DEFAULT 0, -- replays enqueued (rows deleted meanwhile are skipped)
    state       text        NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'finished')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz NULL
);

-- Every replay, single or bulk, with the job it enqueued.
CREATE TABLE replay (
    id             bigserial   PRIMARY KEY,
    inbox_id       bigint      NOT NULL REFERENCES inbox (id) ON DELETE CASCADE,
    bulk_replay_id bigint      NULL REFERENCES bulk_replay (id) ON DELETE CASCADE,
    job_id         bigint      NOT NULL,
    requested_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX replay_inbox_idx ON replay (inbox_id);
CREATE INDEX replay_bulk_idx ON replay (bulk_replay_id) WHERE bulk_replay_id IS NOT NULL;
