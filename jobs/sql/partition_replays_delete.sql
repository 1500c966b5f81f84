-- The replay records of the partition [@lo, @hi)'s deliveries, deleted as
-- the partition is dropped (the records lived and died with their
-- delivery's row by a foreign key before the inbox was partitioned).
DELETE FROM replay WHERE inbox_id >= @lo AND inbox_id < @hi
