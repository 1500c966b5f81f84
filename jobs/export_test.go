package jobs

var (
	ReindexedIndexes    = reindexedIndexes
	DroppedRiverIndexes = droppedRiverIndexes
)
