-- Operational alerts (internal/alerts): one row per condition seen, from
-- the moment it held (since) until it resolved. A row whose opened_at is
-- null is pending: its condition has not yet held for its rule's "for".
-- At most one unresolved row per (rule, subject): the evaluator that
-- opens or resolves it holds the row, so an alert is raised once and
-- resolved once, however many processes evaluate.
CREATE TABLE alert (
    id          bigserial   PRIMARY KEY,
    rule        text        NOT NULL,
    subject     text        NOT NULL,
    since       timestamptz NOT NULL,
    opened_at   timestamptz NULL,
    resolved_at timestamptz NULL,
    summary     text        NOT NULL
);
CREATE UNIQUE INDEX alert_unresolved_idx ON alert (rule, subject) WHERE resolved_at IS NULL;
CREATE INDEX alert_opened_idx ON alert (opened_at DESC) WHERE opened_at IS NOT NULL;
