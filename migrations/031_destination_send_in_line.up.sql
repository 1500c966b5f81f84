-- An ordered send's place in its resource's line is given by the sender,
-- not by the processing that enqueues it. Processing took the resource's
-- turn row itself and held its lock until its batch committed, and the
-- sender, handing turns on, waited for those locks, as did the next
-- processing of the same resources: an ordered route fell behind traffic
-- that an unordered one kept pace with (bench/README.md, "An ordered
-- route"). Now processing enqueues an ordered send waiting and not yet in
-- line; the sender, whose claims run one at a time under the destination's
-- state row, takes each new send's resource turn if it is free, or lines
-- the send up behind the send in progress.
--
-- in_line is false for an ordered send waiting to be put in line: one
-- processing enqueued, or an operator's retry reset. Rows written before,
-- and by an older replica during a rolling deploy, are in line: the older
-- processing takes their turns itself, as it did.
--
-- The sender finds the new sends by the index below. Building it reads
-- destination_send while holding its writes: with many sends kept,
-- `hookinbox migrate --prepare` adds the column and builds the index
-- beforehand, CONCURRENTLY (ahead/031_destination_send_in_line_*.sql),
-- and this migration finds them there.
ALTER TABLE destination_send ADD COLUMN IF NOT EXISTS in_line boolean NOT NULL DEFAULT true;
CREATE INDEX IF NOT EXISTS destination_send_arrived_idx ON destination_send (destination, id)
    WHERE state = 'waiting' AND NOT in_line;
