-- The conditions that hold now, one row per (rule, subject), each with
-- the time it has held since and a summary for people. Each rule's branch
-- runs only when the rule is configured (its parameters non-null). The
-- inbox is read through the views internal/inbox publishes for these rules
-- (delivery_failed_count, delivery_received, delivery_backlog:
-- migrations/035), which the planner inlines.
SELECT 'destination_failing', s.destination, coalesce(s.circuit_open_since, s.failing_since),
       'Destination ' || s.destination || ' failing since ' || to_char(coalesce(s.circuit_open_since, s.failing_since) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI "UTC"')
       || coalesce(': ' || left(s.last_error, 200), '')
FROM destination_state s
WHERE @failing_for::interval IS NOT NULL AND coalesce(s.circuit_open_since, s.failing_since) IS NOT NULL
UNION ALL
SELECT 'sends_failed', d.destination, min(d.finished_at),
       count(*) || ' send(s) to ' || d.destination || ' failed for good; retry them after fixing the cause'
FROM destination_send d
WHERE @sends_min::int IS NOT NULL AND d.state = 'failed'
GROUP BY d.destination HAVING count(*) >= @sends_min::int
UNION ALL
-- A delivery failed after its last attempt keeps no time of failure (its
-- processed_at is null), so the condition is tracked from when it is seen.
SELECT 'deliveries_failed', f.source, now(),
       f.deliveries || ' ' || f.source || ' deliveries failed for good; replay them once the handler is fixed'
FROM delivery_failed_count f
WHERE @deliveries_min::int IS NOT NULL AND f.deliveries >= @deliveries_min::int
UNION ALL
-- The last delivery accepted from a source: the inbox's latest of the last
-- minute, exact and ahead of ingest's per-minute counts (flushed every few
-- seconds), so that a delivery resolves the alert at once; before that,
-- the end of the last minute counted, never more recent than a minute ago
-- (a silence under a minute is then exact, a longer one opens at most a
-- minute late, never early). None in the counts' retention: silent since
-- now.
SELECT 'source_silent', src.name, coalesce(last.at, now()),
       'No delivery accepted from ' || src.name || ' for ' || src.silence::text
FROM unnest(@silent_sources::text[], @silent_fors::interval[]) AS src (name, silence)
CROSS JOIN LATERAL (SELECT coalesce(
    (SELECT max(r.received_at) FROM delivery_received r
     WHERE r.source = src.name AND r.received_at > now() - interval '1 minute'),
    (SELECT least(max(m.minute) + interval '1 minute', now() - interval '1 minute') FROM ingest_minute m
     WHERE m.source = src.name AND m.outcome = 'accepted' HAVING count(*) > 0)) AS at) last
WHERE last.at IS NULL OR last.at < now() - src.silence
UNION ALL
SELECT 'backlog', 'deliveries', now(),
       p.deliveries || ' deliveries wait to be processed'
FROM delivery_backlog p
WHERE @backlog_over::bigint IS NOT NULL AND p.deliveries > @backlog_over::bigint
UNION ALL
-- A Kafka source's lag: the sum of its newest reading, whichever replica
-- stored it (internal/kafkasource/sql/lag_store.sql); a row an older
-- reading left beside it is not counted. The newest reading counts however
-- old it is: a consumer that stopped reading keeps its last one, and the
-- summary says when it was read once it is older than the rule's stale.
SELECT 'kafka_lag', r.source, now(),
       'Kafka source ' || r.source || ' is ' || l.lag || ' messages behind on ' || l.topics || ' (over ' || r.over || ')'
       || CASE WHEN r.stale > interval '0' AND l.at < now() - r.stale
               THEN '; read at ' || to_char(l.at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"') || ', none since'
               ELSE '' END
FROM unnest(@lag_sources::text[], @lag_overs::bigint[], @lag_stales::interval[]) AS r (source, over, stale)
CROSS JOIN LATERAL (
    SELECT sum(k.lag) AS lag, string_agg(DISTINCT k.topic, ', ' ORDER BY k.topic) AS topics, max(k.observed_at) AS at
    FROM kafka_lag k
    WHERE k.source = r.source
      AND k.observed_at = (SELECT max(n.observed_at) FROM kafka_lag n WHERE n.source = r.source)) l
WHERE l.lag > r.over
