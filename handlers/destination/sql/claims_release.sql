-- Ends claims whose requests were cut short by shutdown: the sends are
-- due again at once, for any sender, with no attempt spent.
UPDATE destination_send s SET claimed_by = NULL, claimed_until = NULL
FROM unnest(@ids::bigint[], @holders::text[]) AS v(id, holder)
WHERE s.id = v.id AND s.claimed_by = v.holder
