SELECT payload, headers FROM inbox WHERE id = @id
