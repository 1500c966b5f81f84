package riverdb

// DroppedIndexes are River's GIN indexes on river_job over args and over
// metadata, which migrations/014_river_job_without_gin.up.sql drops (it
// says why). River's reindexer lists them by these names; jobs leaves them
// out of its list, or River would warn daily that they are missing.
var DroppedIndexes = []string{"river_job_args_index", "river_job_metadata_index"}
