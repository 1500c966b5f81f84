-- Ends the turns of finished ordered sends, the destination's state row
-- locked (state_lock.sql), as it is wherever this version's senders take
-- or hand on a turn, and the turns' rows (chain_lock_many.sql):
-- on success what the destination got of the resource moves forward
-- (never back) on the clock the event was ordered by; then the resource's
-- first waiting send is made due, or the resource is freed. That send may
-- be one processing enqueued and no claim has put in line yet
-- (chain_line_up.sql): it is due now, and in line. RETURNING names the
-- sends made due.
WITH v AS (
    SELECT * FROM unnest(@sources::text[], @resource_keys::text[], @succeeded::bool[], @event_ats::timestamptz[],
                         @event_received_ats::timestamptz[], @at_is_receipts::bool[])
        AS v(source, resource_key, succeeded, event_at, event_received_at, at_is_receipt)
), next AS MATERIALIZED (
    SELECT v.*, (SELECT s.id FROM destination_send s
                 WHERE s.destination = @destination AND s.source = v.source AND s.resource_key = v.resource_key
                   AND s.state = 'waiting'
                 ORDER BY s.id
                 LIMIT 1) AS next_id
    FROM v
    JOIN destination_resource r ON r.destination = @destination AND r.source = v.source AND r.resource_key = v.resource_key
), turned AS (
    UPDATE destination_resource r
    SET sent_at = CASE WHEN n.succeeded AND NOT n.at_is_receipt
                            AND (r.sent_at IS NULL OR (r.sent_at, coalesce(r.sent_received_at, '-infinity')) <= (n.event_at, n.event_received_at))
                       THEN n.event_at ELSE r.sent_at END,
        sent_received_at = CASE WHEN n.succeeded AND NOT n.at_is_receipt
                            AND (r.sent_at IS NULL OR (r.sent_at, coalesce(r.sent_received_at, '-infinity')) <= (n.event_at, n.event_received_at))
                       THEN n.event_received_at ELSE r.sent_received_at END,
        receipt_sent_at = CASE WHEN n.succeeded AND n.at_is_receipt AND (r.receipt_sent_at IS NULL OR r.receipt_sent_at <= n.event_received_at)
                       THEN n.event_received_at ELSE r.receipt_sent_at END,
        busy = n.next_id IS NOT NULL,
        updated_at = now()
    FROM next n
    WHERE r.destination = @destination AND r.source = n.source AND r.resource_key = n.resource_key
)
UPDATE destination_send s SET state = 'pending', next_attempt_at = now(), in_line = true
FROM next n
WHERE s.id = n.next_id
RETURNING s.id
