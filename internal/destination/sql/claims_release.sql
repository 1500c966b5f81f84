-- Ends claims whose requests were cut short by shutdown: their slots are
-- free, and the sends due again at once, for any sender, with no attempt
-- spent.
UPDATE destination_slot sl SET send_id = NULL, holder = NULL, claimed_until = '-infinity'
FROM unnest(@ids::bigint[], @slots::int[], @holders::text[]) AS v(id, slot, holder)
WHERE sl.destination = @destination AND sl.slot = v.slot AND sl.send_id = v.id AND sl.holder = v.holder
