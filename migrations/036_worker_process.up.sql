-- The processes that run a configuration of processing (worker_config
-- holds the configurations), one row each, and the newest configuration
-- each has seen as of its last look. A process of a new configuration
-- reports ready once every live process of another one has looked after
-- it said it runs it, and stopped fetching processing jobs if it is
-- older (Generation.Settle, jobs/generation_settle.go): evidence, where
-- a fixed wait left a process whose look came late (a slow database, a
-- long pause) processing under the old configuration.
--
-- A new table: an older binary still running beside this one during the
-- deploy reads and writes worker_config as before and never this table.
CREATE TABLE worker_process (
    id          text        PRIMARY KEY, -- random, one per process start
    host        text        NOT NULL,    -- host name and pid, for the logs
    fingerprint text        NOT NULL,    -- the configuration it runs
    seen_at     timestamptz NOT NULL,    -- when it last said so
    live_until  timestamptz NOT NULL,    -- gone if it says nothing more by then
    looked_at   timestamptz,             -- when its last applied look began
    newest      text                     -- the newest configuration that look found
);
