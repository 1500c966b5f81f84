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
	{
		// The mirror's batch keeps every row of an issue: one statement
		// cannot update a row twice, so a batch holding two sources'
		// deliveries of one issue fails, every time.
		Name:    "issue-mirror-rows-not-merged",
		Promise: promiseOrder,
		File:    "handlers/github/issue_mirror.go",
		Edits:   []Edit{{Find: "\t\tif i, ok := at[key]; ok {\n", Replace: "\t\tif i, ok := at[key]; ok && false {\n"}},
		Pkgs:    []string{"./handlers"},
		Run:     "^TestIssueMirrorBatchKeepsTheNewestOfAnIssuesRows$",
	},
	{
		// Of one issue's rows the batch keeps the older.
		Name:    "issue-mirror-rows-keep-older",
		Promise: promiseOrder,
		File:    "handlers/github/issue_mirror.go",
		Edits:   []Edit{{Find: "if row.Updated.Before(args.updated[i]) {", Replace: "if row.Updated.After(args.updated[i]) {"}},
		Pkgs:    []string{"./handlers"},
		Run:     "^TestIssueMirrorBatchKeepsTheNewestOfAnIssuesRows$",
	},
}
