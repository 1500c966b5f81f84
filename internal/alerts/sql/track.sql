-- A condition that holds: tracked from its own since (or now) if no
-- unresolved alert has it yet; an existing one keeps the earlier since,
-- its summary brought up to date.
INSERT INTO alert (rule, subject, since, summary)
VALUES (@rule, @subject, least(@since, now()), @summary)
ON CONFLICT (rule, subject) WHERE resolved_at IS NULL
DO UPDATE SET summary = excluded.summary, since = least(alert.since, excluded.since)
