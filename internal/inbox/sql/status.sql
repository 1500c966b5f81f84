SELECT status, last_error FROM delivery WHERE id = $1
