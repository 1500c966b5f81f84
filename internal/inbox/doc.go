// Package inbox owns the inbox's tables: the statements that record,
// find, load, mark, list, count and retire deliveries live here, and
// every other package calls this package's functions or reads the views
// this package publishes (below; from outside hookinbox, the view
// delivery). The migrations create the tables (migrations/*.sql are the
// schema's history); this comment is where to learn what they hold now
// and the rule that keeps them right.
// TestNothingElseNamesTheInboxTables fails when a file elsewhere names
// them in SQL, unless it is on the list at the end of this comment.
//
// # The tables
//
// inbox: one row per stored delivery, written once by ingest and never
// updated: id, source, delivery_id, event_type, occurred_at, headers (as
// received, credentials dropped), payload (the body, byte for byte, lz4
// where the server has it), payload_sha256, received_at, origin
// (webhook, kafka, or the provider API a recovery read it from), body_key
// (a digest of event type and body, for the sources that dedupe bodies;
// NULL for the others). id has no default: ingest takes it from
// inbox_id_seq with the delivery's key. The table is partitioned by ranges
// of id, which the sequence hands out in arrival order, so a partition
// holds a span of time: inbox_p<lo> (inbox_p0 holds the ids from before
// partitioning), made ahead of the ids by Partitions (jobs runs it every
// minute) through the function inbox_partition_create, which also makes the matching
// inbox_outcome partition and gives both their parent's statistics
// targets (inbox_partition_statistics) and autovacuum settings
// (inbox_partition_vacuum); inbox_overflow, the default partition, takes
// ids no range is ready for, so ingest never fails for want of one.
// Retention drops a partition whole once every delivery in it is expired
// and finished; the rows it cannot wait for (the overflow's, a source's
// with a shorter retention) it deletes in batches.
//
// inbox_pending: a delivery no processing run has decided yet (status
// received): inbox_id, its source, event_type and received_at again, and
// last_error, the last failed attempt's while retries remain. Ingest's
// statement inserts it with the inbox row; processing deletes it when it
// decides. Not partitioned: it holds the backlog, and stays that small.
//
// inbox_outcome: what processing decided: status (processed, skipped or
// failed), processed_at, resource_key and stale (what the handlers found),
// last_error; source, event_type and received_at again, so that a filter
// on status and those reads one table. Partitioned like inbox
// (inbox_outcome_p<lo>, inbox_outcome_overflow), with partial indexes on
// the statuses that stay small (status <> 'processed') and on
// resource_key. Neither state table has a foreign key to inbox: the KEY
// SHARE lock its check takes would write the inbox row they exist not to
// write (migrations/016).
//
// delivery, a view: the inbox with each row's state, as one row: the
// inbox's columns, status (received while an inbox_pending row exists,
// else the outcome's), processed_at, resource_key, stale, last_error. The
// statements here read it where a row's whole state is wanted; outside
// hookinbox, dashboards and an application's own SQL read it rather than
// the tables.
//
// inbox_key: one row per stored delivery, its key: source, delivery_id,
// inbox_id, payload_sha256, origin, body_key. It decides duplicates (the
// rule below) and says which stored delivery a duplicate repeats without
// reading the inbox. Partitioned by generations of inbox ids, 2^40 ids
// each (inbox_key_g<lo>; inbox_key_g0 from the lowest bigint), listed in
// inbox_key_generation (lo, hi, opened_at; NULL until ids are handed out
// in it) and made by the function inbox_key_generation_create.
// Partitions opens the next generation once the current one has taken new
// keys for jobs.RetentionConfig.KeyGeneration (the longest retention by
// default), and drops a generation whole once the inbox holds no delivery
// of its ids.
//
// delivery_conflict: every request refused with 409
// delivery_id_conflict, a delivery id the inbox holds sent again with
// another body: source, delivery_id, inbox_id (the stored delivery, no
// foreign key), received_at, payload_sha256, headers, body (up to 64 KiB),
// body_size, and copies and last_received_at, for the same body sent
// again, which counts a copy on its row (unique on source, delivery_id
// and payload_sha256). Never written in the inbox transaction: a statement
// of its own after it decided the conflict. Retention keeps 7 days.
//
// # The views it publishes
//
// A statement of another package that reads the inbox in the statement
// that reads its own tables (one snapshot, one round trip) reads these
// views, never the tables, so that the tables change here alone
// (migrations/035). Each is a plain view, which the planner expands into
// the statement that reads it: the plan is the one the statement had over
// the tables (a count adds a projection above the same aggregate). A
// change to the tables rewrites a view's body in the same
// migration and keeps its columns.
//
// delivery_request: a stored delivery's request as a destination
// forwards it: id, payload (byte for byte), content_type (the first
// Content-Type header, its name matched in any case: a Kafka delivery's
// is stored as its producer spelled it), headers, received_at. A
// destination's claim (internal/destination/sql/send_claim.sql) reads its
// sends' bodies with it.
//
// delivery_received: source and received_at of each delivery a sender
// sent (origin webhook or kafka; a recovery's are left out). The
// source_silent alert rule reads a source's latest
// (internal/alerts/sql/conditions.sql).
//
// delivery_failed_count: source, deliveries: how many of a source's
// deliveries failed for good, for the deliveries_failed rule.
//
// delivery_backlog: deliveries: how many wait for a processing run to
// decide them, for the backlog rule.
//
// delivery_storage: bytes (inbox, inbox_key, inbox_pending and
// inbox_outcome, each with its partitions, indexes and TOAST) and
// oldest_received_at, for the metrics' table gauges
// (internal/metrics/sql/tables.sql).
//
// # What is a duplicate
//
// A unique constraint decides, inside the insert, in the transaction that
// also inserts the delivery's job; nothing asks "does it exist?" first.
// One statement (inbox_insert.sql, and inbox_insert_many.sql for a
// batch), sent in ingest's transaction, inserts the key into inbox_key
// with ON CONFLICT DO NOTHING and the inbox and inbox_pending rows only
// for a key that was new; River's InsertTx (InsertManyTx) then inserts the job
// of each stored delivery, and one commit makes the delivery and its job
// visible together, or neither. The primary key (source, delivery_id) of
// the generation the key falls in decides between two inserts of one key
// running at once: the second waits for the first transaction and then
// inserts nothing. The unique index on (source, body_key) decides the
// same for a body sent again under a fresh id, where the source dedupes
// bodies. A key that inserted nothing is a duplicate of the stored
// delivery its key names (inbox_find.sql): the same body is answered as a
// duplicate, another body is a conflict (409, recorded in
// delivery_conflict).
//
// The constraints hold within a generation, so the insert also looks the
// key up in the older generations. The look-up is sound because every
// inserting transaction first takes the generations' fence, an advisory
// lock held shared (key_fence.sql), in READ COMMITTED, so the insert's
// snapshot is taken once the fence is held; a new generation opens under
// the fence held exclusively, which waits for every insert in flight.
// Two inserts of one key therefore never fall in two generations at once
// (migrations/032).
//
// # What lives here
//
// Reads of the admin API, the console, metrics, recovery and handlertest:
// List, Get, Exists and Status (a delivery with its state),
// ListConflicts and GetConflict, Backlog, CountSelected (a bulk replay's
// preview), CountByStatus and OldestPendingSeconds (the scrape's gauges),
// KnownDeliveryIDs (the ids a recovery need not ask for again), and a
// follower's reads in id order (stream.go: HighWater, Settle, StreamScan,
// StreamLoad, FirstSince; GET /admin/deliveries/stream and `hookinbox
// listen`). A function whose rows the caller scans into its own types
// (an API's JSON, a page) returns pgx.Rows or pgx.Row and says its
// columns, in order; counts and look-ups return values. Each takes a Querier, so a
// caller runs it in its own transaction when it needs one snapshot.
//
// Ingest's transaction: QueueRecord and ReadRecord (QueueRecordMany and
// ReadRecordMany for a batch) record deliveries by the rule above, Find
// and Payload read the stored delivery a duplicate repeats, and
// RecordConflict records a 409. Recording is ingest's hot path, and each
// of its round trips counts (bench/README.md, Design decisions, "Ingest
// round trips"): a batch's BEGIN travels with the recording statements,
// and its COMMIT with River's job insert. So recording is not a function
// that runs its own round trips but a pair: Queue adds its statements to
// the caller's pgx.Batch, and Read reads their results from what sending
// that batch returned, in the order they were queued.
//
// Processing: Load (a delivery run alone), LoadMany and LoadPayloads (a
// processing batch's deliveries, then the headers and bodies of those a
// handler matches), MarkError (a failed attempt). Processing's outcomes
// are recorded by riverdb.CompleteProcessing, in the statement that
// completes River's jobs. A HandOff carries what ingest stores to
// processing in the same process, which then loads only the headers and
// bodies it was not handed: what it holds is what the rows hold.
//
// Bulk replays: RecordBulkReplay (the selection, CountSelected's filters,
// stored with the bulk replay) and LockBulkReplayBatch (its next batch,
// minus the deliveries deleted since). The bulk_replay table is jobs'; each
// of these reads the inbox in the statement that writes or locks its row,
// one snapshot and one round trip.
//
// The inbox's lifecycle: Partitions makes the partitions and key
// generations ahead of the ids (Ensure, OpenKeyGeneration) and drops them
// whole (Retire, RetireKeyGenerations), with the locks, checks and
// detaches each takes; jobs keeps the River workers that run it, and
// hands it what retention must keep outside the inbox (Busy:
// riverdb.PartitionBusy) and what goes with a partition (Dropping: its
// replay records). DeleteExpiredConflicts is conflict records' retention.
//
// # Still outside
//
// Statements that read or write the inbox's tables in the statement that
// reads River's, which would otherwise be two statements, two snapshots
// and two round trips, and which write the inbox's rows, or read them for
// a rule no view publishes. In internal/riverdb, which owns River's
// tables: orphan_sweep_find.sql (which also marks and locks pending rows)
// and replay_get.sql join River's jobs;
// processing_complete.sql records processing's outcomes in the statement
// that completes River's jobs (riverdb.CompleteProcessing);
// retention_inbox.sql and retention_inbox_held.sql delete (count) the
// expired deliveries in batches, keeping those whose jobs are unfinished
// (riverdb.DeleteExpiredDeliveries, CountHeldDeliveries);
// partition_busy.sql is the same rule for a partition about to be
// dropped (riverdb.PartitionBusy).
//
// Not statements of the service: internal/testdb's SetStatus (a fixture
// that puts deliveries in a state), and cmd/hookinbox-mutate's mutations,
// which quote other files' statements to change them.
package inbox
