-- Claims up to @limit due sends of a destination, oldest due first, into
-- its free slots (of the first @slots), with what their requests need:
-- the delivery's body byte for byte, its Content-Type, its headers and
-- receipt when @with_input (a route to the destination has expressions,
-- which read them), and for ordered sends what the destination already
-- got of their resource (to tell a stale one); the delivery's part
-- through the view internal/inbox publishes for it, delivery_request
-- (migrations/035), which the planner inlines. A claim expires by itself
-- (@ttl covers the request), so a send whose sender died is made again.
-- The caller holds the destination's state row, so no other claim runs
-- meanwhile. free and due are materialized: inlined, the planner paired
-- them in a nested loop that ran the due sends' scan once per free slot.
-- due compares with the time as a value, not as a join with t: joined,
-- where statistics taken before a backlog said few sends were due, the
-- planner put t outside, lost the index's order, and read and sorted
-- every due send for the few it took (60 ms a claim behind 46,000).
WITH t AS (
    SELECT clock_timestamp() AS now
), free AS MATERIALIZED (
    SELECT sl.slot, row_number() OVER (ORDER BY sl.slot) AS n
    FROM destination_slot sl, t
    WHERE sl.destination = @destination AND sl.slot < @slots AND sl.claimed_until <= t.now
    ORDER BY sl.slot
    LIMIT @limit
), due AS MATERIALIZED (
    SELECT id, row_number() OVER (ORDER BY next_attempt_at, id) AS n
    FROM (SELECT s.id, s.next_attempt_at
          FROM destination_send s
          WHERE s.destination = @destination AND s.state = 'pending' AND s.next_attempt_at <= (SELECT now FROM t)
            AND s.id NOT IN (SELECT sl.send_id FROM destination_slot sl, t
                             WHERE sl.destination = @destination AND sl.claimed_until > t.now AND sl.send_id IS NOT NULL)
          ORDER BY s.next_attempt_at, s.id
          LIMIT @limit) d
), claimed AS (
    UPDATE destination_slot sl SET send_id = due.id, holder = @holder, claimed_until = t.now + @ttl::interval
    FROM free JOIN due USING (n), t
    WHERE sl.destination = @destination AND sl.slot = free.slot
    RETURNING sl.slot, sl.send_id
)
SELECT c.slot, s.id, s.source, s.delivery_id, s.event_type, s.key, s.ordered, s.skip_stale, s.resource_key,
       s.event_at, s.event_received_at, s.at_is_receipt, s.attempts, s.created_at, s.trace_parent,
       i.payload, i.content_type,
       CASE WHEN @with_input::boolean THEN i.headers END, CASE WHEN @with_input::boolean THEN i.received_at END,
       r.sent_at, r.sent_received_at, r.receipt_sent_at
FROM claimed c
JOIN destination_send s ON s.id = c.send_id
LEFT JOIN delivery_request i ON i.id = s.inbox_id
LEFT JOIN destination_resource r
       ON s.ordered AND r.destination = @destination AND r.source = s.source AND r.resource_key = s.resource_key
ORDER BY s.id
