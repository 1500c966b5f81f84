-- Opens the generation that starts at @lo: the sequence skips to its first
-- id, so every key inserted from now on falls in it, and it records when.
-- Run under the fence (key_generation_fence.sql), once; the sequence only
-- ever moves forward (setval is not undone should the transaction fail).
UPDATE inbox_key_generation SET opened_at = now()
WHERE lo = @lo AND opened_at IS NULL
RETURNING setval('inbox_id_seq', greatest(lo, (SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM inbox_id_seq)), false)
