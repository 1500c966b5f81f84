-- Destinations: every matching delivery is sent to the user's own HTTP
-- services. One send per (delivery, destination): the unique constraint
-- is what makes a replay, a retry or a crash never produce a second,
-- distinct request. The send is inserted in the delivery's processing
-- transaction (the outbox), with the River job that makes it.
CREATE TABLE destination_send (
    id                bigserial   PRIMARY KEY,
    destination       text        NOT NULL,
    source            text        NOT NULL,
    delivery_id       text        NOT NULL,
    inbox_id          bigint      NOT NULL, -- no foreign key: retention keeps the row while the send is unfinished
    event_type        text        NOT NULL,
    key               text        NOT NULL, -- webhook-id and Idempotency-Key: stable across retries and replays
    -- Ordered routes: one resource's sends to one destination go one at a
    -- time, in the order they were enqueued ('waiting' until the previous
    -- one is done); the event's ordering time tells a stale one.
    ordered           boolean     NOT NULL,
    skip_stale        boolean     NOT NULL,
    resource_key      text        NULL,
    event_at          timestamptz NOT NULL,
    event_received_at timestamptz NOT NULL,
    at_is_receipt     boolean     NOT NULL,
    -- waiting: an ordered send behind its resource's send in progress (no
    -- job); pending: its job is queued or running; held: its destination
    -- is paused (no job; resuming gives it one).
    state             text        NOT NULL CHECK (state IN ('waiting', 'pending', 'held', 'succeeded', 'failed', 'skipped')),
    stale             boolean     NOT NULL DEFAULT false,
    attempts          integer     NOT NULL DEFAULT 0,
    job_id            bigint      NULL,
    last_status       integer     NULL,
    last_error        text        NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    finished_at       timestamptz NULL,
    CONSTRAINT destination_send_once UNIQUE (source, delivery_id, destination)
);
CREATE INDEX destination_send_unfinished_idx ON destination_send (destination, state)
    WHERE state IN ('waiting', 'pending', 'held');
CREATE INDEX destination_send_failed_idx ON destination_send (destination, finished_at)
    WHERE state = 'failed';
CREATE INDEX destination_send_chain_idx ON destination_send (destination, source, resource_key, id)
    WHERE state = 'waiting';

-- Every request made for a send, for operators.
CREATE TABLE destination_attempt (
    id           bigserial   PRIMARY KEY,
    send_id      bigint      NOT NULL REFERENCES destination_send (id) ON DELETE CASCADE,
    attempt      integer     NOT NULL,
    attempted_at timestamptz NOT NULL,
    duration_ms  integer     NOT NULL,
    status       integer     NULL,     -- HTTP status; null when no answer came
    error        text        NULL,
    response     text        NULL,     -- the answer's first bytes
    stale        boolean     NOT NULL,
    probe        boolean     NOT NULL  -- sent while the circuit was open
);
CREATE INDEX destination_attempt_send_idx ON destination_attempt (send_id);

-- Per destination, shared by every replica: pause, the circuit breaker and
-- the rate limiter's next free slot.
CREATE TABLE destination_state (
    destination          text        PRIMARY KEY,
    paused               boolean     NOT NULL DEFAULT false,
    consecutive_failures integer     NOT NULL DEFAULT 0,
    circuit_open_since   timestamptz NULL,
    next_probe_at        timestamptz NULL,
    failing_since        timestamptz NULL,
    last_error           text        NULL,
    next_send_at         timestamptz NOT NULL DEFAULT '-infinity'
);

-- max_in_flight across replicas: one row per slot; a send leases a slot
-- for the length of its request (expires_at bounds a lease whose holder
-- died).
CREATE TABLE destination_lease (
    destination text        NOT NULL,
    slot        integer     NOT NULL,
    holder      text        NULL,
    expires_at  timestamptz NOT NULL DEFAULT '-infinity',
    PRIMARY KEY (destination, slot)
);

-- Ordered routes: per (destination, resource), whether a send is in
-- progress, and the ordering time of the newest event the destination got
-- (on the provider's clock, ties by receipt; and on the receipt clock for
-- events without one), which tells a later-sent older event is stale.
CREATE TABLE destination_resource (
    destination        text        NOT NULL,
    source             text        NOT NULL,
    resource_key       text        NOT NULL,
    busy               boolean     NOT NULL,
    sent_at            timestamptz NULL,
    sent_received_at   timestamptz NULL,
    receipt_sent_at    timestamptz NULL,
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (destination, source, resource_key)
);
