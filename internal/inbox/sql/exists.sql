SELECT true FROM inbox WHERE id = @id
