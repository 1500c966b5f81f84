-- The pending alerts whose condition has held long enough, opened now:
-- a destination failing for @failing_for, a backlog for @backlog_for, a
-- Kafka source's lag for its own rule's for, the others at once
-- (source_silent's silence is already its rule's).
UPDATE alert SET opened_at = now()
WHERE resolved_at IS NULL AND opened_at IS NULL
  AND since <= now() - CASE rule WHEN 'destination_failing' THEN @failing_for::interval
                                 WHEN 'backlog' THEN @backlog_for::interval
                                 WHEN 'kafka_lag' THEN coalesce(
                                     (SELECT l.f FROM unnest(@lag_sources::text[], @lag_fors::interval[]) AS l (s, f)
                                      WHERE l.s = alert.subject), interval '0')
                                 ELSE interval '0' END
RETURNING id, rule, subject, since, summary
