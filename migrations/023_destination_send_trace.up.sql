-- The W3C traceparent of the processing that enqueued a send: each
-- attempt's span, and the traceparent header a destination receives,
-- continue that trace, however long after the send is made. Null when
-- tracing was off.
ALTER TABLE destination_send ADD COLUMN trace_parent text NULL;
