-- The pending alerts whose condition has held long enough, opened now:
-- a destination failing for @failing_for, a backlog for @backlog_for, the
-- others at once (source_silent's silence is already its rule's).
UPDATE alert SET opened_at = now()
WHERE resolved_at IS NULL AND opened_at IS NULL
  AND since <= now() - CASE rule WHEN 'destination_failing' THEN @failing_for::interval
                                 WHEN 'backlog' THEN @backlog_for::interval
                                 ELSE interval '0' END
RETURNING id, rule, subject, since, summary
