-- The alerts open now, newest first, each with how many are open: through
-- alert_opened_idx, whose rows are the alerts raised (a few per condition).
SELECT id, rule, subject, since, opened_at, resolved_at, summary, count(*) OVER ()
FROM alert
WHERE opened_at IS NOT NULL AND resolved_at IS NULL
ORDER BY opened_at DESC, id DESC
LIMIT @limit
