package main

// deferRowMutations break the rows handlers defer (Event.DeferRow), which
// a processing batch writes in one statement at its end: a delivery
// processed alone must write its own. (Keeping a failed handler's rows in
// processLocked is equivalent: runHandlers returns none with an error.)
var deferRowMutations = []Mutation{
	{
		// A delivery processed alone (a batch's fallback) writes none of
		// its deferred rows: its sends would be lost.
		Name:    "deferred-rows-dropped-alone",
		Promise: promiseCompletion,
		File:    "handlers/pipeline.go",
		Edits:   []Edit{{Find: "\trows.queue(b)\n", Replace: ""}},
		Pkgs:    []string{"./handlers"},
		Run:     "^TestDeferredRowsAreWrittenOncePerBatch$",
	},
}
