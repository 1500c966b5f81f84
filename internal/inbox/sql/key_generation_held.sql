-- Whether the inbox holds a delivery with an id in [@lo, @hi), in any
-- partition, the overflow included: its key must stay.
SELECT EXISTS (SELECT 1 FROM inbox WHERE id >= @lo AND id < @hi)
