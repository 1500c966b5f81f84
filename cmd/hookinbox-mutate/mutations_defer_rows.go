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
		Edits: []Edit{{
			Find:    "if row.Updated.Truncate(time.Microsecond).Before(args.updated[i].Truncate(time.Microsecond)) {",
			Replace: "if row.Updated.Truncate(time.Microsecond).After(args.updated[i].Truncate(time.Microsecond)) {",
		}},
		Pkgs: []string{"./handlers"},
		Run:  "^TestIssueMirrorBatchKeepsTheNewestOfAnIssuesRows$",
	},
	{
		// Of one issue's rows with equal times the batch keeps the first:
		// a statement a row would have left the later.
		Name:    "issue-mirror-tie-keeps-first",
		Promise: promiseOrder,
		File:    "handlers/github/issue_mirror.go",
		Edits: []Edit{{
			Find:    "if row.Updated.Truncate(time.Microsecond).Before(args.updated[i].Truncate(time.Microsecond)) {",
			Replace: "if !row.Updated.Truncate(time.Microsecond).After(args.updated[i].Truncate(time.Microsecond)) {",
		}},
		Pkgs: []string{"./handlers"},
		Run:  "^TestIssueMirrorBatchKeepsTheNewestOfAnIssuesRows$",
	},
	{
		// A batch's deferred rows are never written.
		Name:    "deferred-rows-dropped-batch",
		Promise: promiseCompletion,
		File:    "handlers/tx_batch.go",
		Edits:   []Edit{{Find: "\tb.rows.queue(batch)\n", Replace: ""}},
		Pkgs:    []string{"./handlers"},
		Run:     "^TestDeferredRowsAreWrittenOncePerBatch$",
	},
	{
		// A writer that cannot be compared is taken: the batch's
		// grouping panics outside the handler, failing every delivery of
		// the batch and, alone, the job without a recorded error.
		Name:    "defer-row-writer-unchecked",
		Promise: promiseCompletion,
		File:    "handlers/defer_rows.go",
		Edits:   []Edit{{Find: "\tif w == nil || !reflect.TypeOf(w).Comparable() {\n", Replace: "\tif w == nil || !reflect.TypeOf(w).Comparable() && false {\n"}},
		Pkgs:    []string{"./handlers"},
		Run:     "^TestDeferRowRefusesAWriterThatCannotBeCompared$",
	},
}
