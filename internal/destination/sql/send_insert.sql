-- Sends, one per (delivery, destination), a processing batch's at once
-- (sendRows), in the order given: a replay or a retry of the processing
-- inserts nothing for its delivery, and RETURNING yields no row for it. A
-- pending send is due at once; a waiting one (ordered) has no due time and
-- is not yet in its resource's line: the sender puts it there
-- (chain_line_up.sql), due at once if its resource's turn is free; a failed
-- one (its route's filter failed to evaluate) is finished, with its error.
INSERT INTO destination_send (destination, source, delivery_id, inbox_id, event_type, key, ordered, skip_stale,
                              resource_key, event_at, event_received_at, at_is_receipt, state, in_line,
                              next_attempt_at, last_error, finished_at, trace_parent)
SELECT destination, source, delivery_id, inbox_id, event_type, key, ordered, skip_stale,
       resource_key, event_at, event_received_at, at_is_receipt, state, state <> 'waiting',
       CASE WHEN state = 'pending' THEN now() END, last_error,
       CASE WHEN state = 'failed' THEN now() END, trace_parent
FROM unnest(@destinations::text[], @sources::text[], @delivery_ids::text[], @inbox_ids::bigint[],
            @event_types::text[], @keys::text[], @ordered::boolean[], @skip_stale::boolean[],
            @resource_keys::text[], @event_ats::timestamptz[], @event_received_ats::timestamptz[],
            @at_is_receipts::boolean[], @states::text[], @last_errors::text[], @trace_parents::text[])
     WITH ORDINALITY AS s (destination, source, delivery_id, inbox_id, event_type, key, ordered, skip_stale,
                           resource_key, event_at, event_received_at, at_is_receipt, state, last_error,
                           trace_parent, n)
ORDER BY n
ON CONFLICT ON CONSTRAINT destination_send_once DO NOTHING
RETURNING id
