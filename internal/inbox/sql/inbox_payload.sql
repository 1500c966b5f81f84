-- A stored delivery's body, to tell a retry whose volatile fields changed
-- from a conflict (verify.SameEvent).
SELECT payload FROM inbox WHERE id = @id
