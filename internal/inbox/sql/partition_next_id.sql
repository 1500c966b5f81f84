-- The next id the sequence hands out: every id below it is taken, or
-- will be by a transaction that has it now.
SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM inbox_id_seq
