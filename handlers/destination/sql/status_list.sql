-- Every destination's health for operators, from its shared rows and its
-- sends (unfinished ones through their partial index). The last error is
-- current only while the destination is failing: a success clears
-- failing_since, and the error stays behind with its time.
SELECT st.destination, st.paused, st.circuit_open_since IS NOT NULL, st.failing_since,
       CASE WHEN st.failing_since IS NOT NULL THEN st.last_error END, st.last_error_at,
       st.consecutive_failures,
       (SELECT count(*) FROM destination_slot c
         WHERE c.destination = st.destination AND c.claimed_until > clock_timestamp()),
       (SELECT count(*) FROM destination_send s
         WHERE s.destination = st.destination AND s.state IN ('waiting', 'pending', 'held'))
FROM destination_state st
WHERE st.destination = ANY(@destinations)
ORDER BY st.destination
