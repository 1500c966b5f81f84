SELECT greatest(extract(epoch FROM (next_send_at - clock_timestamp())), 0)::float8
FROM destination_state WHERE destination = @destination
