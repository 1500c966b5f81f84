-- An alert whose condition no longer holds: resolved if it was open,
-- forgotten if it was still pending.
WITH gone AS (
    DELETE FROM alert WHERE id = @id AND opened_at IS NULL RETURNING id
)
UPDATE alert SET resolved_at = now() WHERE id = @id AND opened_at IS NOT NULL
