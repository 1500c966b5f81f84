-- Sends per destination and final state.
SELECT destination, state, count(*)
FROM destination_send
WHERE destination = ANY(@destinations)
GROUP BY destination, state
