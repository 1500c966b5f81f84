// Package jobs holds hookinbox's River job kinds and their workers, and
// builds the River client that runs them.
//
// # A delivery's way through processing
//
// Ingest inserts a delivery's inbox row and, in the same transaction, its
// processing job: a process_delivery job of its own, or one
// process_deliveries job for the deliveries an ingest batch accepted
// (ProcessDeliveryArgs, ProcessDeliveriesArgs). Then:
//
//  1. River fetches the jobs. Their workers hand their deliveries to the
//     processing batcher (process_batch.go), which gathers the deliveries of
//     the jobs fetched together, up to ClientConfig.BatchSize (jobs.batch_size),
//     within ClientConfig.BatchWindow.
//  2. One transaction processes the batch: it loads the deliveries, and
//     handlers.Registry.ProcessBatch locks each delivery's resource, runs
//     its handlers under a savepoint of its own and records the resource's
//     version. A delivery that must run alone
//     (its resource busy, its handlers not batchable) or that failed gets a
//     process_delivery job of its own, in that same transaction
//     (process_deliveries.go).
//  3. In that transaction still, the deliveries' outcomes are recorded and
//     the jobs completed (complete.go), guarded by each job's attempt, so a
//     run River no longer holds writes nothing. The commit is the effects',
//     the outcomes' and the completions' together.
//
// A job whose run fails is retried by River; a batch job that cannot
// complete splits its deliveries into jobs of their own. The orphan sweep
// (orphan_sweep.go) gives a job to a delivery left without one, retention
// (retention.go) deletes what is finished, and the generation
// (generation.go) leaves processing to the newest configuration during a
// rolling deploy. The generation's tables, worker_config and
// worker_process, are this package's: no other package's SQL names them
// (TestNothingElseNamesTheGenerationTables).
//
// # Where the line with package handlers runs
//
// This package owns the processing transaction: which deliveries share
// it, when it commits, what it records and how a failure is retried.
// Package handlers owns what runs inside it, for one delivery
// (Registry.Process) or a batch (Registry.ProcessBatch): the resource
// locks, the ordering, the handlers and their deferred writes. A handler's
// Event is built there, and the handler API must not depend on River's
// job machinery, so the line stays where the transaction is handed over.
//
// # Not a stable API
//
// Package jobs is part of hookinbox's engine: it exports what the
// module's other packages need, and a library user calls the root package
// and the handlers package instead.
package jobs
