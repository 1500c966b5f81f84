-- Each Kafka source's lag as the broker has it, for the alerts' kafka_lag
-- rule, which reads the database and not Prometheus: per partition of the
-- source's topics, the high watermark less the consumer group's committed
-- offset, and when it was read (internal/kafkasource/lag.go).
--
-- Any process reading a source reads the whole group's lag (the group's
-- commits, not its own partitions), so every replica writes the same
-- figures. One statement writes a reading, all its rows with one
-- observed_at, and deletes the source's rows it has no partition for: a
-- partition moved to another topic set or gone leaves nothing behind. The
-- rule sums the source's newest reading only, so replicas writing at once
-- never add one reading's partition to another's
-- (internal/kafkasource/sql/lag_store.sql).
--
-- A new table of a few rows per source: nothing existing is locked.
CREATE TABLE kafka_lag (
    source      text        NOT NULL,
    topic       text        NOT NULL,
    partition   int         NOT NULL,
    lag         bigint      NOT NULL,
    observed_at timestamptz NOT NULL,
    PRIMARY KEY (source, topic, partition)
);
