-- Opens the generation that starts at @lo: the sequence skips to its first
-- id, so every key inserted from now on falls in it, and it records when.
-- Run under the fence (key_generation_fence.sql), once: an open
-- generation is never opened again, which would set the sequence back.
UPDATE inbox_key_generation SET opened_at = now()
WHERE lo = @lo AND opened_at IS NULL
RETURNING setval('inbox_id_seq', lo, false)
