// Package riverdb holds what hookinbox assumes about River beyond River's
// public API: the text and arguments of River's private statements, the
// tables, columns, states and indexes of River's schema that hookinbox's
// SQL reads or changes, and the keys River keeps in a job's metadata.
// hookinbox uses these where River's API would cost measurably more (each
// place says why, by the decision's name). RiverVersion is the River
// release they were checked against; the package's tests fail on any
// other, saying what to re-check, and check each assumption against the
// real River and a migrated database.
//
// # What is assumed, and where it is used
//
// River's job insert (JobInsertStatement, JobInsertKindsArg,
// InsertNotifyStatement). ingest's commit-carrying transaction
// (ingest/commit_carry.go) sends a batch's COMMIT in one round trip with the
// statement InsertManyTx sends for all its jobs; it recognises that statement
// by its sqlc name and counts its jobs by the kinds argument, and lets only
// River's insert notification follow it. The public API has no hook there,
// and committing after InsertManyTx returns makes a batch three round trips
// instead of two, and the ack's p99 longer (bench/README.md, Design
// decisions, "Ingest round trips").
//
// River's table river_job: columns id, kind, args, metadata, tags, queue,
// state (type river_job_state: available, pending, running, retryable,
// scheduled, completed, cancelled, discarded), attempt, max_attempts,
// errors (River's AttemptError as JSON, with an "error" key), created_at,
// scheduled_at, finalized_at. River's API lists jobs one filter at a time
// (JobList) and cannot join them with hookinbox's tables in one
// statement, so these queries read river_job directly:
//   - here: JobCounts (metrics' hookinbox_river_jobs), DeliveryAttempts,
//     DeliveryKeys and Replay (the admin API's and the console's job
//     lookups), FindOrphans (jobs' orphan sweep), FailStalledSagas
//     (handlers/stripe's saga sweep), CompleteProcessing (completes
//     River's jobs as JobCompleteTx does, in the statement that records
//     the deliveries' outcomes: jobs' processing), ProcessingStalled (the
//     queue switching of jobs.Generation), BulkReplay (a bulk replay's
//     progress, which counts its replays' finished jobs), and
//     retention's rule that unfinished work is kept:
//     DeleteExpiredDeliveries and CountHeldDeliveries (the inbox's
//     batched retention), DeleteExpiredRelated (handler steps, resource
//     versions, sends), PartitionBusy (a partition about to be dropped,
//     which inbox.Partitions asks through its Busy);
//   - elsewhere, still: internal/metrics/sql/tables.sql (river_job's size
//     and oldest row);
//     handlers/handlertest/wait.go (tests' waits on a job's state).
//
// River's indexes. migrations/014 drops River's GIN indexes
// river_job_args_index and river_job_metadata_index (DroppedIndexes),
// which jobs leaves out of River's reindexer list; migrations/004 and 018
// add river_job_process_delivery_inbox_idx and
// river_job_process_deliveries_inbox_range_idx on river_job's args;
// migrations/017 sets the statistics of river_job's args, metadata,
// attempted_by, errors and tags to 0; migrations/013 deletes jobs of
// kinds hookinbox no longer has. Migrations stay where they are, as the
// schema's history: their assumptions are pinned here.
//
// River's job metadata: "snoozes", River's count of a job's snoozes
// (Snoozes), read by jobs.Generation's deferrals and by handlers'
// downstream jobs.
//
// # Before and after
//
// Before this package, the non-test Go and SQL files of 7 packages named
// River's tables or private statements (handlers/handlertest,
// handlers/stripe, ingest, internal/admin, internal/metrics, jobs,
// migrations); now 3 do (handlers/handlertest, internal/metrics,
// migrations), each file listed above and in
// TestNothingElseNamesRiversTables.
// Counted with:
//
//	git grep -l -E '\briver_(job|queue|leader|client|migration)|-- name: (JobInsertFastMany|PGNotifyMany)' \
//	    -- '*.go' '*.sql' ':!*_test.go' ':!cmd/hookinbox-bench' ':!internal/riverdb'
package riverdb

// RiverVersion is the River release whose internals this package was
// checked against: github.com/riverqueue/river and its driver modules.
const RiverVersion = "v0.51.2"
