package main

// generatedGapMutations close gaps that the generated passes over the rows
// found (see docs/guarantees.md, Generated mutations): each was a
// generated mutant that survived its row's tests.
var generatedGapMutations = []Mutation{
	{
		Name:    "kafka-produce-error-dropped",
		Promise: promiseSendOnce,
		File:    "internal/destination/broker_kafka.go",
		// A produce the replicas never took is recorded succeeded.
		Edits: []Edit{{
			Find:    `		return "", fmt.Errorf("kafka topic %s: %w", m.target, err)`,
			Replace: `		return "", nil`,
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestKafkaPublisherSendNoReplicaTakesFails$",
	},
	{
		Name:    "kafka-lag-at-over-counts",
		Promise: promiseKafkaLag,
		File:    "internal/alerts/sql/conditions.sql",
		// A lag back to over is still over it: the alert stays open.
		Edits: []Edit{{
			Find:    "WHERE l.lag > r.over",
			Replace: "WHERE l.lag >= r.over",
		}},
		Pkgs: []string{"./internal/alerts"},
		Run:  "^TestKafkaLagOpensAfterItsForAndResolves$",
	},
	{
		Name:    "idempotency-key-max-length-refused",
		Promise: promiseIdempotency,
		File:    "internal/admin/idempotency.go",
		// A key of the longest length allowed is refused as too long.
		Edits: []Edit{{
			Find:    "if len(key) > MaxIdempotencyKeyLength {",
			Replace: "if len(key) >= MaxIdempotencyKeyLength {",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestIdempotencyKeyContract$",
	},
	{
		Name:    "idempotency-query-ignored",
		Promise: promiseIdempotency,
		File:    "internal/admin/idempotency.go",
		// The fingerprint leaves the query out: a request with another
		// query gets the stored answer of the first.
		Edits: []Edit{{
			Find:    `c.Request().URI().QueryArgs().VisitAll(func(k, v []byte) { query = append(query, string(k)+"="+string(v)) })`,
			Replace: `_ = c`,
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestIdempotencyKeyContract$",
	},
	{
		Name:    "idempotency-lost-key-commits",
		Promise: promiseIdempotency,
		File:    "internal/admin/idempotency.go",
		// A request whose key a retry took over commits and answers too:
		// the work is done twice under one key.
		Edits: []Edit{{
			Find: `			return &apiError{http.StatusConflict, CodeRequestInProgress,
				"this request took too long and another with the same Idempotency-Key took over; retry later"}`,
			Replace: `			return nil`,
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestIdempotencyRequestThatOutlivesItsLockAnswers409$",
	},
	{
		Name:    "idempotency-lock-never-expires",
		Promise: promiseIdempotency,
		File:    "internal/admin/idempotency.go",
		// The lock's length is not passed: a key whose request died is
		// never taken over, every retry gets 409 until the key expires.
		Edits: []Edit{{
			Find:    `		args["lock_secs"] = s.cfg.IdempotencyLock.Seconds()`,
			Replace: ``,
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestIdempotencyRequestThatOutlivesItsLockAnswers409$",
	},
	{
		Name:    "circuit-skips-failures-after-success",
		Promise: promiseCountOnce,
		File:    "internal/destination/record.go",
		// A flush with a success counts none of its failures, also those
		// that ended after the success.
		Edits: []Edit{{
			Find:    "(t.anyOK && !r.res.at.Add(r.res.took).After(lastOK))",
			Replace: "(t.anyOK || !r.res.at.Add(r.res.took).After(lastOK))",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestAFlushCountsTheFailuresAfterItsLastSuccess$",
	},
	{
		Name:    "failed-run-marks-other-deliveries",
		Promise: promiseCompletion,
		File:    "internal/inbox/sql/inbox_mark_error.sql",
		// A run that fails for good marks every other finished delivery
		// failed with its error.
		Edits: []Edit{{
			Find:    "WHERE inbox_id = @id\n  AND (processed_at IS NULL",
			Replace: "WHERE inbox_id <> @id\n  AND (processed_at IS NULL",
		}},
		Pkgs: []string{"./handlers"},
		Run:  "^TestFailedRunDoesNotUndoAConcurrentReplaysOutcome$",
	},
}
