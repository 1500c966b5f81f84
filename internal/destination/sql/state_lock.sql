-- The destination's state row, locked by a sender about to end ordered
-- sends' turns: a claim puts new sends in line under the same row
-- (chain_line_up.sql), so this version's senders take and hand on turns
-- one transaction at a time, each taking the state row before any turn
-- row.
SELECT 1 FROM destination_state WHERE destination = @destination FOR UPDATE
