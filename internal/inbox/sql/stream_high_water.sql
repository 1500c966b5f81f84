-- The greatest id inbox_id_seq has handed out, 0 before the first. The
-- sequence caches one id a session (jobs refuses another CACHE), so every
-- id at or below it was taken before this statement ran.
SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END
FROM inbox_id_seq
