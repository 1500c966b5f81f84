-- Records when the generation that starts at @lo opened, for one whose
-- open moved the sequence into it and then failed to commit.
UPDATE inbox_key_generation SET opened_at = now() WHERE lo = @lo AND opened_at IS NULL
