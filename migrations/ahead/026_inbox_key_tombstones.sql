-- The tombstones deletes left while the copy ran (026_inbox_key_follow.sql),
-- found through the BRIN index of inbox_id.
DELETE FROM inbox_key WHERE inbox_id < 0
