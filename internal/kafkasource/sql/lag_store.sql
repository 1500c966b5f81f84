-- A reading of a source's lag replaces the source's rows
-- (migrations/034_kafka_lag.up.sql): each of its partitions takes its
-- figure and this statement's time, and a partition it has not (moved out
-- of the source's topics, or the topic gone) is deleted. Replicas read the
-- same group, and their readings may cross: a row keeps a newer reading's
-- figure over an older one committed after it, and only rows older than
-- this reading are deleted, so the newest reading stays whole. A row an
-- older reading leaves beside it is not summed (internal/alerts,
-- conditions.sql) and goes at the next reading.
WITH reading AS (
    SELECT * FROM unnest(@topics::text[], @partitions::int[], @lags::bigint[]) AS r (topic, partition, lag)
), gone AS (
    DELETE FROM kafka_lag k
    WHERE k.source = @source AND k.observed_at < now()
      AND NOT EXISTS (SELECT 1 FROM reading r WHERE r.topic = k.topic AND r.partition = k.partition)
)
INSERT INTO kafka_lag (source, topic, partition, lag, observed_at)
SELECT @source, topic, partition, lag, now() FROM reading
ON CONFLICT (source, topic, partition) DO UPDATE SET lag = excluded.lag, observed_at = excluded.observed_at
WHERE kafka_lag.observed_at <= excluded.observed_at
