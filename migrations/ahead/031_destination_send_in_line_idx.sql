-- migrations/031_destination_send_in_line.up.sql: the index of ordered
-- sends not yet in line, built without holding the sends' writes.
CREATE INDEX CONCURRENTLY IF NOT EXISTS destination_send_arrived_idx ON destination_send (destination, id)
    WHERE state = 'waiting' AND NOT in_line
