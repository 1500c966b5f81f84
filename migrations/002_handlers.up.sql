-- Order awareness: the newest ordering time applied to each resource. A
-- delivery older than applied_at is stale. Updated in the same transaction
-- as the handlers' effects.
CREATE TABLE resource_version (
    source       text        NOT NULL,
    resource_key text        NOT NULL,
    applied_at   timestamptz NOT NULL,
    delivery_id  text        NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source, resource_key)
);

-- Follow-up jobs a handler enqueues "once": the derived key is the primary
-- key, so a retry or a replay of the delivery cannot enqueue the same step
-- twice, even after River has pruned the completed job.
CREATE TABLE handler_step (
    key         text        PRIMARY KEY,
    source      text        NOT NULL,
    delivery_id text        NOT NULL,
    handler     text        NOT NULL,
    step        text        NOT NULL,
    job_id      bigint      NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX handler_step_delivery_idx ON handler_step (source, delivery_id);

-- Example handler: GitHub issues and pull requests, latest state only.
CREATE TABLE github_issue_mirror (
    repo             text        NOT NULL,
    number           integer     NOT NULL,
    kind             text        NOT NULL CHECK (kind IN ('issue', 'pull_request')),
    state            text        NOT NULL,
    title            text        NOT NULL,
    updated_at       timestamptz NOT NULL,
    last_delivery_id text        NOT NULL,
    PRIMARY KEY (repo, number)
);

-- Example handlers: a ledger whose entries are unique on natural keys, so
-- no retry, replay or duplicate job can book an entry twice.
CREATE TABLE ledger (
    id             bigserial   PRIMARY KEY,
    payment_intent text        NOT NULL,
    kind           text        NOT NULL CHECK (kind IN ('credit', 'refund', 'charge_refunded', 'payment_failed')),
    reference      text        NOT NULL DEFAULT '',
    amount         bigint      NOT NULL, -- minor units; debits are negative
    currency       text        NOT NULL,
    source         text        NOT NULL,
    delivery_id    text        NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT ledger_natural_key UNIQUE (payment_intent, kind, reference)
);

-- Example handler: the payment saga's state per payment intent.
CREATE TABLE payment_saga (
    payment_intent text        PRIMARY KEY,
    source         text        NOT NULL,
    delivery_id    text        NOT NULL,
    amount         bigint      NOT NULL,
    currency       text        NOT NULL,
    state          text        NOT NULL CHECK (state IN ('fulfilling', 'fulfilled', 'refunding', 'refunded', 'failed')),
    fulfill_key    text        NOT NULL,
    refund_key     text        NOT NULL,
    last_error     text        NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
