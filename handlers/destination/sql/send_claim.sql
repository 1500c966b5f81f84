-- Claims up to @limit due sends of a destination, oldest due first, with
-- what their requests need: the delivery's body byte for byte, its
-- Content-Type, its headers and receipt when @with_input (a route to the
-- destination has expressions, which read them), and for ordered sends what the destination already got of
-- their resource (to tell a stale one). A claim expires by itself
-- (@ttl covers the request), so a send whose sender died is made again.
WITH due AS (
    SELECT id FROM destination_send
    WHERE destination = @destination AND state = 'pending' AND next_attempt_at <= clock_timestamp()
      AND (claimed_until IS NULL OR claimed_until < clock_timestamp())
    ORDER BY next_attempt_at, id
    LIMIT @limit
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE destination_send s SET claimed_by = @holder, claimed_until = clock_timestamp() + @ttl::interval
    FROM due
    WHERE s.id = due.id
    RETURNING s.id, s.source, s.delivery_id, s.inbox_id, s.event_type, s.key, s.ordered, s.skip_stale, s.resource_key,
              s.event_at, s.event_received_at, s.at_is_receipt, s.attempts, s.created_at, s.trace_parent
)
SELECT c.id, c.source, c.delivery_id, c.event_type, c.key, c.ordered, c.skip_stale, c.resource_key,
       c.event_at, c.event_received_at, c.at_is_receipt, c.attempts, c.created_at, c.trace_parent,
       i.payload, i.headers->'Content-Type'->>0,
       CASE WHEN @with_input::boolean THEN i.headers END, CASE WHEN @with_input::boolean THEN i.received_at END,
       r.sent_at, r.sent_received_at, r.receipt_sent_at
FROM claimed c
LEFT JOIN inbox i ON i.id = c.inbox_id
LEFT JOIN destination_resource r
       ON c.ordered AND r.destination = @destination AND r.source = c.source AND r.resource_key = c.resource_key
ORDER BY c.id
