package main

// rowAndJobTests hold the inbox transaction open after RecordTx and
// RecordManyTx, then roll it back or commit it, and look at both tables.
// Other ingest tests fail under a job insert of its own too, but only
// because the second connection it takes exhausts their pool: that
// defends nothing.
const rowAndJobTests = "^TestRecordTx(RollsBack|Commits)RowAndJobTogether$"

// inboxMutations are intake's and processing's: what is acknowledged is
// stored, a duplicate or bad input creates nothing, the inbox row and its
// job commit together, effects commit with the job's completion, derived
// keys are stable and a compensation runs once.
var inboxMutations = []Mutation{
	{
		Name:    "ingest-always-503",
		Promise: promiseAcked,
		File:    "ingest/receive.go",
		Edits: []Edit{{
			Find:    "if err := s.cfg.Accepting(); err != nil {",
			Replace: "if err := s.cfg.Accepting(); err != nil || true {",
		}},
		// The drill would wait out its readiness bound (a minute and
		// more); the ingest test fails at its first request.
		Pkgs: []string{"./ingest"},
		Run:  "^TestReceiveAcceptedIsStoredWithItsJob$",
	},
	{
		Name:    "unavailable-answered-2xx",
		Promise: promiseAcked,
		File:    "ingest/errors.go",
		Edits: []Edit{{
			Find: `		// stored, so ask the provider to retry. Never a 2xx.
		return http.StatusServiceUnavailable, CodeUnavailable`,
			Replace: `		// stored, so ask the provider to retry. Never a 2xx.
		return http.StatusAccepted, CodeUnavailable`,
		}},
		Pkgs: []string{"./ingest"},
		Run:  "^TestReceiveDatabaseUnreachableIs503$",
	},
	{
		Name:    "ingest-lookup-before-insert",
		Promise: promiseDuplicate,
		File:    "internal/inbox/sql/inbox_insert.sql",
		// The look-up across key generations stays; the unique
		// constraint's arbitration of concurrent inserts goes.
		Edits: []Edit{{
			Find:    "\n    ON CONFLICT",
			Replace: "\n    -- ON CONFLICT",
		}},
		Pkgs: []string{"./ingest"},
		Run:  "^TestReceiveConcurrentDuplicatesYieldOneRowAndOneJob$",
	},
	{
		Name:    "ingest-batch-conflict-unhandled",
		Promise: promiseDuplicate,
		File:    "internal/inbox/sql/inbox_insert_many.sql",
		Edits: []Edit{{
			Find:    "\n    ON CONFLICT",
			Replace: "\n    -- ON CONFLICT",
		}},
		// Duplicates already committed are found by the look-up; the
		// constraint decides the one whose insert is in flight.
		Pkgs: []string{"./ingest"},
		Run:  "^(TestRecordManyTxOutcomes|TestRecordManyTxSeesAnOriginalCommittedDuringItsInsert)$",
	},
	{
		Name:    "key-generation-unfenced",
		Promise: promiseDuplicate,
		File:    "internal/inbox/sql/key_fence.sql",
		Edits: []Edit{{
			Find:    "(SELECT pg_advisory_xact_lock_shared(26731, 1))",
			Replace: "(SELECT 1)",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestAKeyGenerationOpensBetweenInsertsNeverAcrossOne$",
	},
	{
		Name:    "key-generation-batch-unfenced",
		Promise: promiseDuplicate,
		File:    "internal/inbox/record.go",
		Edits: []Edit{{
			Find:    "\tb.Queue(keyFenceSQL)\n\tb.Queue(insertManySQL",
			Replace: "\tb.Queue(insertManySQL",
		}, {
			Find:    "\tif err := readFence(res); err != nil {\n\t\treturn nil, nil, err\n\t}\n",
			Replace: "",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestAKeyGenerationOpensBetweenInsertsNeverAcrossOne$",
	},
	{
		Name:    "key-generation-any-isolation",
		Promise: promiseDuplicate,
		File:    "internal/inbox/record.go",
		Edits: []Edit{{
			Find:    `	if isolation != "read committed" {`,
			Replace: `	if false {`,
		}},
		Pkgs: []string{"./ingest"},
		Run:  "^TestRecordingNeedsReadCommitted$",
	},
	{
		Name:    "key-generation-lookup-skipped",
		Promise: promiseDuplicate,
		File:    "internal/inbox/sql/inbox_insert.sql",
		Edits: []Edit{{
			Find:    "WHERE NOT EXISTS (SELECT 1 FROM inbox_key WHERE source = @source AND delivery_id = @delivery_id)",
			Replace: "WHERE true",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestADuplicateIsFoundInAnOlderKeyGeneration$",
	},
	{
		Name:    "key-generation-batch-lookup-skipped",
		Promise: promiseDuplicate,
		File:    "internal/inbox/sql/inbox_insert_many.sql",
		Edits: []Edit{{
			Find:    "    WHERE seen.one IS NULL",
			Replace: "    WHERE true",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestADuplicateIsFoundInAnOlderKeyGeneration$",
	},
	{
		Name:    "key-generation-dropped-while-held",
		Promise: promiseDuplicate,
		File:    "internal/inbox/sql/key_generation_held.sql",
		Edits: []Edit{{
			Find:    "SELECT EXISTS (SELECT 1 FROM inbox WHERE id >= @lo AND id < @hi)",
			Replace: "SELECT false",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestRetentionDropsAKeyGenerationOnceTheInboxHoldsNoneOfIt$",
	},
	{
		Name:    "unsigned-request-stored",
		Promise: promiseBadInput,
		File:    "ingest/receive.go",
		Edits: []Edit{{
			Find: `		verify.Request{Body: body, Header: header, RawQuery: string(c.Request().URI().QueryString())})
	if err != nil {`,
			Replace: `		verify.Request{Body: body, Header: header, RawQuery: string(c.Request().URI().QueryString())})
	if err != nil && !errors.Is(err, verify.ErrInvalidSignature) {`,
		}},
		Pkgs: []string{"./ingest"},
		Run:  "^TestReceiveRejectsAndWritesNothing$",
	},
	{
		Name:    "ingest-job-own-transaction",
		Promise: promiseRowAndJob,
		File:    "ingest/inbox.go",
		Edits: []Edit{{
			Find: `		res, err := in.jobs.InsertTx(ctx, tx, jobs.ProcessDeliveryArgs{InboxID: id}, nil)
		if err != nil {`,
			Replace: `		own, err := in.pool.Begin(ctx)
		if err != nil {
			return Recorded{}, err
		}
		defer own.Rollback(ctx)
		res, err := in.jobs.InsertTx(ctx, own, jobs.ProcessDeliveryArgs{InboxID: id}, nil)
		if err == nil {
			err = own.Commit(ctx)
		}
		if err != nil {`,
		}},
		Pkgs: []string{"./ingest"},
		Run:  rowAndJobTests,
	},
	{
		Name:    "ingest-batch-jobs-own-transaction",
		Promise: promiseRowAndJob,
		File:    "ingest/batch.go",
		Edits: []Edit{{
			Find: `		res, err := in.jobs.InsertManyTx(ctx, tx, params)
		if err != nil {`,
			Replace: `		own, err := in.pool.Begin(ctx)
		if err != nil {
			return nil, nil, err
		}
		defer own.Rollback(ctx)
		res, err := in.jobs.InsertManyTx(ctx, own, params)
		if err == nil {
			err = own.Commit(ctx)
		}
		if err != nil {`,
		}},
		Pkgs: []string{"./ingest"},
		Run:  rowAndJobTests,
	},
	{
		Name:    "completion-ignores-attempt",
		Promise: promiseCompletion,
		File:    "internal/riverdb/sql/processing_complete.sql",
		Edits: []Edit{{
			Find:    "WHERE j.id = k.id AND j.state = 'running' AND j.attempt = k.attempt",
			Replace: "WHERE j.id = k.id",
		}},
		Pkgs: []string{"./handlers"},
		Run:  "^TestStaleRunAloneDoesNotCompleteTheLiveAttempt$",
	},
	{
		Name:    "failed-run-overrides-replay",
		Promise: promiseCompletion,
		File:    "internal/inbox/sql/inbox_mark_error.sql",
		Edits: []Edit{{
			Find:    "AND (processed_at IS NULL OR processed_at < @attempt_started_at)",
			Replace: "AND (processed_at IS NULL OR processed_at < @attempt_started_at OR TRUE)",
		}},
		Pkgs: []string{"./handlers"},
		Run:  "^TestFailedRunDoesNotUndoAConcurrentReplaysOutcome$",
	},
	{
		Name:    "derived-key-includes-time",
		Promise: promiseKeys,
		File:    "handlers/keys.go",
		Edits: []Edit{{
			Find:    "\t\"encoding/hex\"\n)",
			Replace: "\t\"encoding/hex\"\n\t\"time\"\n)",
		}, {
			Find:    "return hashKey(nil, source, deliveryID, handler, step)",
			Replace: "return hashKey(nil, source, deliveryID, handler, step, time.Now().String())",
		}},
		Pkgs: []string{"./handlers"},
		Run:  "^TestDeriveKey$",
	},
	{
		Name:    "refund-key-per-attempt",
		Promise: promiseCompensate,
		File:    "handlers/stripe/saga.go",
		Edits: []Edit{{
			Find:    "Call{URL: url, Key: a.Key,",
			Replace: "Call{URL: url, Key: fmt.Sprint(a.Key, job.Attempt),",
		}},
		Pkgs: []string{"./handlers/stripe"},
		Run:  "^TestSagaRefusalCompensatesExactlyOnce$",
	},
}
