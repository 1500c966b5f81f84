package main

// brokerAndRouteMutations are the Kafka source's, the broker
// destinations' and the routes' expressions'.
var brokerAndRouteMutations = []Mutation{
	{
		Name:    "kafka-offsets-before-inbox",
		Promise: promiseOffsets,
		File:    "internal/kafkasource/consumer.go",
		Edits: []Edit{{
			Find: `	delay := 500 * time.Millisecond
	for {
		err := c.record(ctx, ds)`,
			Replace: `	if cctx, cancel := c.detached(ctx); true {
		_ = c.client.CommitRecords(cctx, recs...)
		cancel()
	}
	delay := 500 * time.Millisecond
	for {
		err := c.record(ctx, ds)`,
		}},
		Pkgs: []string{"./internal/kafkasource"},
		Run:  "^TestDatabaseOutageMovesNoOffset$",
	},
	{
		Name:    "kafka-batch-not-drained",
		Promise: promiseOffsets,
		File:    "internal/kafkasource/consumer.go",
		Edits: []Edit{{
			Find:    "	rctx, cancel := c.detached(ctx)",
			Replace: "	rctx, cancel := context.WithCancel(ctx)",
		}},
		Pkgs: []string{"./internal/kafkasource"},
		Run:  "^TestStopDrainsTheBatchInHand$",
	},
	{
		Name:    "kafka-refused-commit-dropped",
		Promise: promiseOffsets,
		File:    "internal/kafkasource/consumer.go",
		Edits: []Edit{{
			Find:    "	} else if c.uncommitted {",
			Replace: "	} else if false && c.uncommitted {",
		}},
		Pkgs: []string{"./internal/kafkasource"},
		Run:  "^TestRefusedCommitIsTriedAgain$",
	},
	{
		Name:    "kafka-commit-retry-waits-for-a-message",
		Promise: promiseOffsets,
		File:    "internal/kafkasource/consumer.go",
		// A refused commit is tried again only when a new message comes:
		// the poll that should return within commitRetry waits for one.
		// Found by a generated pass (drop ! in poll).
		Edits: []Edit{{
			Find:    "	if !c.uncommitted {\n		return c.client.PollRecords(ctx, c.cfg.MaxPollRecords)",
			Replace: "	if c.uncommitted {\n		return c.client.PollRecords(ctx, c.cfg.MaxPollRecords)",
		}},
		Pkgs: []string{"./internal/kafkasource"},
		Run:  "^TestRefusedCommitIsTriedAgainWithoutANewMessage$",
	},
	{
		Name:    "nats-msg-id-dropped",
		Promise: promiseSendOnce,
		File:    "internal/destination/broker_nats.go",
		Edits: []Edit{{
			Find:    "jetstream.WithMsgID(m.id), ",
			Replace: "",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestNATSPublisherRepeatIsDroppedByTheStream$",
	},
	{
		Name:    "route-error-filters-out",
		Promise: promiseRoutes,
		File:    "internal/destination/destination.go",
		Edits: []Edit{{
			Find: `		if err != nil {
			return t, true, fmt.Errorf("routes[%d] (%s): %w", t.index, t.route.Source, err)
		}`,
			Replace: `		if err != nil {
			continue
		}`,
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestRouteErrorIsAFailedSendRetriedAfterTheFix$",
	},
	{
		Name:    "transform-not-sent",
		Promise: promiseRoutes,
		File:    "internal/destination/expr.go",
		Edits: []Edit{{
			Find:    "	l.Payload, l.ContentType = body, &contentType",
			Replace: "	_, _ = body, contentType",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestRouteFilterAndTransform$",
	},
	{
		Name:    "ordered-turn-freed-early",
		Promise: promiseOrderedSends,
		File:    "internal/destination/sql/chain_finish_many.sql",
		// The turn is freed even as the next send is made due: a send
		// enqueued meanwhile finds the resource free and goes beside it.
		Edits: []Edit{{
			Find:    "busy = n.next_id IS NOT NULL,",
			Replace: "busy = false,",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestAnOrderedSendArrivingMidChainWaitsItsTurn$",
	},
	{
		Name:    "ordered-sent-not-advanced",
		Promise: promiseOrderedSends,
		File:    "internal/destination/sql/chain_finish_many.sql",
		// What the destination got never moves: no older event is told
		// stale.
		Edits: []Edit{{
			Find:    "    SET sent_at = CASE WHEN n.succeeded AND NOT n.at_is_receipt",
			Replace: "    SET sent_at = CASE WHEN false",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^(TestOrderedSendsOneResourceAtATime|TestSkipStaleDoesNotSendOlderEvents)$",
	},
	{
		Name:    "ordered-turn-taken-when-busy",
		Promise: promiseOrderedSends,
		File:    "internal/destination/sql/chain_line_up.sql",
		// A new ordered send takes its resource's turn whether or not
		// another of its resource is in progress.
		Edits: []Edit{{
			Find:    "    WHERE NOT r.busy\n",
			Replace: "    WHERE true\n",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^(TestOrderedSendsOneResourceAtATime|TestAnOrderedSendArrivingMidChainWaitsItsTurn)$",
	},
	{
		Name:    "ordered-line-up-starts-all",
		Promise: promiseOrderedSends,
		File:    "internal/destination/sql/chain_line_up.sql",
		// Every new send of a resource whose turn is free is made due,
		// not only its first.
		Edits: []Edit{{
			Find:    "LEFT JOIN first f ON f.id = a.id",
			Replace: "LEFT JOIN first f ON f.source = a.source AND f.resource_key = a.resource_key",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^(TestOrderedSendsOneResourceAtATime|TestSendsOfOneResourceFoundTogetherGoOneAtATime)$",
	},
	{
		Name:    "ordered-retry-jumps-the-line",
		Promise: promiseOrderedSends,
		File:    "internal/destination/sql/send_retry_reset.sql",
		// An operator's retry makes an ordered send due at once, beside
		// its resource's send in progress.
		Edits: []Edit{{
			Find:    "SET state = CASE WHEN p.lines_up THEN 'waiting' ELSE 'pending' END,",
			Replace: "SET state = 'pending',",
		}, {
			Find:    "next_attempt_at = CASE WHEN p.lines_up THEN s.next_attempt_at ELSE now() END,",
			Replace: "next_attempt_at = now(),",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestARetriedOrderedSendWaitsForTheSendInProgress$",
	},
	{
		Name:    "retention-deletes-taken-turn",
		Promise: promiseRetention,
		File:    "internal/riverdb/sql/retention_related.sql",
		// The idle turn row is deleted as the subquery saw it, though a
		// send took it while the delete waited.
		Edits: []Edit{{
			Find:    "      AND NOT busy AND updated_at < @cutoff\n",
			Replace: "",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestRetentionKeepsATurnTakenWhileItWaits$",
	},
}
