SELECT paused FROM destination_state WHERE destination = @destination FOR SHARE
