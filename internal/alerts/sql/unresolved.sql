-- Every alert open or pending.
SELECT id, rule, subject, since, opened_at, summary FROM alert WHERE resolved_at IS NULL
