-- Every destination's health for operators, from its shared rows and its
-- sends (unfinished ones through their partial index). The last error is
-- current only while the destination is failing: a success clears
-- failing_since, and the error stays behind with its time. The newest
-- failed send comes from the failed sends' index: a send whose route
-- failed to evaluate made no request, so only it names that error.
SELECT st.destination, st.paused, st.circuit_open_since IS NOT NULL, st.failing_since,
       CASE WHEN st.failing_since IS NOT NULL THEN st.last_error END, st.last_error_at,
       st.consecutive_failures,
       (SELECT count(*) FROM destination_slot c
         WHERE c.destination = st.destination AND c.claimed_until > clock_timestamp()),
       (SELECT count(*) FROM destination_send s
         WHERE s.destination = st.destination AND s.state IN ('waiting', 'pending', 'held')),
       f.inbox_id, f.source, f.delivery_id, f.last_error, f.finished_at
FROM destination_state st
LEFT JOIN LATERAL (
    SELECT f.inbox_id, f.source, f.delivery_id, f.last_error, f.finished_at
    FROM destination_send f
    WHERE f.destination = st.destination AND f.state = 'failed'
    ORDER BY f.finished_at DESC
    LIMIT 1
) f ON true
WHERE st.destination = ANY(@destinations)
ORDER BY st.destination
