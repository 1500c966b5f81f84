-- Alerts raised (internal/alerts), open ones first, then the newest past
-- ones; pending conditions (not held long enough yet) are not alerts.
SELECT id, rule, subject, since, opened_at, resolved_at, summary
FROM alert
WHERE opened_at IS NOT NULL
ORDER BY resolved_at IS NOT NULL, opened_at DESC, id DESC
LIMIT @limit
