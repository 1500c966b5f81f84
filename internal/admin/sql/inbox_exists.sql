SELECT source, delivery_id FROM inbox WHERE id = @id
