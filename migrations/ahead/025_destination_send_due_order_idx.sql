-- migrations/025_destination_slot.up.sql: the index of due sends in
-- order, built without holding the sends' writes.
CREATE INDEX CONCURRENTLY IF NOT EXISTS destination_send_due_order_idx
    ON destination_send (destination, next_attempt_at, id) WHERE state = 'pending'
