package migrations

// AllFrom is All over other files, for testing how they are checked.
var AllFrom = all
