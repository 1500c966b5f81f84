package main

// openGapMutations close gaps that the generated passes left open (see
// docs/guarantees.md, Generated mutations): each was a generated mutant
// that survived its row's tests, and is killed now by a test of the
// package that owns the code.
var openGapMutations = []Mutation{
	{
		Name:    "nats-publish-error-dropped",
		Promise: promiseSendOnce,
		File:    "internal/destination/broker_nats.go",
		// A publish the stream refused for any reason but a missing
		// stream is recorded succeeded: the send is lost.
		Edits: []Edit{{
			Find:    `		return "", fmt.Errorf("nats subject %s: %w", m.target, err)`,
			Replace: `		return "", nil`,
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestNATSPublisherRefusedByAFullStreamFails$",
	},
	{
		Name:    "max-in-flight-one-never-sends",
		Promise: promiseLimits,
		File:    "internal/destination/claim.go",
		// A claim that finds one slot free takes none: a destination of
		// max_in_flight: 1 never sends.
		Edits: []Edit{{
			Find:    "	if free <= 0 {",
			Replace: "	if free <= 1 {",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestMaxInFlightOfOneSendsAndServesTheWaitingSender$",
	},
	{
		Name:    "free-slot-kept-from-the-waiting-sender",
		Promise: promiseLimits,
		File:    "internal/destination/claim.go",
		// A sender leaves a slot to itself instead of to the sender that
		// waits for it: with one slot, the waiting replica never sends.
		Edits: []Edit{{
			Find:    "if lk.wantedBy != nil && *lk.wantedBy != instance {",
			Replace: "if lk.wantedBy != nil && *lk.wantedBy == instance {",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestMaxInFlightOfOneSendsAndServesTheWaitingSender$",
	},
	{
		Name:    "slow-rate-limit-leaves-the-clock",
		Promise: promiseLimits,
		File:    "internal/destination/claim.go",
		// A rate_limit of one a second or less never moves the shared
		// clock: every claim starts at the same slot.
		Edits: []Edit{{
			Find:    "	if d.RateLimit > 0 {\n		next = next.Add(",
			Replace: "	if d.RateLimit > 1 {\n		next = next.Add(",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestARateLimitOfOneASecondOrLessMovesTheSharedClock$",
	},
	{
		Name:    "failed-run-fails-other-pending-deliveries",
		Promise: promiseCompletion,
		File:    "internal/inbox/sql/inbox_mark_error.sql",
		// A run that fails for good fails every other pending delivery
		// and leaves its own pending.
		Edits: []Edit{{
			Find:    "WHERE inbox_id = @id AND @final",
			Replace: "WHERE inbox_id <> @id AND @final",
		}},
		Pkgs: []string{"./internal/inbox"},
		Run:  "^TestMarkErrorMarksItsDeliveryOnly$",
	},
	{
		Name:    "retrying-run-marks-other-pending-deliveries",
		Promise: promiseCompletion,
		File:    "internal/inbox/sql/inbox_mark_error.sql",
		// A run that will be retried gives its error to every other
		// pending delivery.
		Edits: []Edit{{
			Find:    "WHERE inbox_id = @id AND NOT @final",
			Replace: "WHERE inbox_id <> @id AND NOT @final",
		}},
		Pkgs: []string{"./internal/inbox"},
		Run:  "^TestMarkErrorMarksItsDeliveryOnly$",
	},
	{
		Name:    "stripe-resource-unread",
		Promise: promiseOrder,
		File:    "handlers/resource.go",
		// A Stripe event names no resource: its events neither wait for
		// one another nor are seen as stale.
		Edits: []Edit{{
			Find:    `		r.Key = jsonString(d.Payload, "data.object.id")`,
			Replace: ``,
		}},
		Pkgs: []string{"./handlers"},
		Run:  "^TestStripeEventsAreOrderedByTheirObject$",
	},
	{
		Name:    "stale-success-moves-receipt-time",
		Promise: promiseOrderedSends,
		File:    "internal/destination/sql/chain_finish_many.sql",
		// A stale event's success sets its receipt time beside a newer
		// event time: a later send of that event time received before it
		// is judged stale.
		Edits: []Edit{{
			Find: `                            AND (r.sent_at IS NULL OR (r.sent_at, coalesce(r.sent_received_at, '-infinity')) <= (n.event_at, n.event_received_at))
                       THEN n.event_received_at ELSE r.sent_received_at END`,
			Replace: `                       THEN n.event_received_at ELSE r.sent_received_at END`,
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestAStaleSendMovesNoReceiptTime$",
	},
	{
		Name:    "partition-busy-misses-first-failed",
		Promise: promiseRetention,
		File:    "internal/riverdb/sql/partition_busy.sql",
		// The check under the inbox's lock misses a failed delivery at
		// the partition's first id: a replay failed between the two
		// looks is dropped with the partition.
		Edits: []Edit{{
			Find:    "WHERE inbox_id >= @lo AND inbox_id < @hi AND status = 'failed'",
			Replace: "WHERE inbox_id > @lo AND inbox_id < @hi AND status = 'failed'",
		}},
		Pkgs: []string{"./internal/riverdb"},
		Run:  "^TestPartitionBusySeesAFailedDeliveryAtItsFirstID$",
	},
	{
		Name:    "retention-sends-of-other-sources",
		Promise: promiseRetention,
		File:    "internal/riverdb/sql/retention_related.sql",
		// A source's retention deletes the finished sends of every other
		// source, by its own period, and keeps its own.
		Edits: []Edit{{
			Find: `                 WHERE created_at < @cutoff AND (source = ANY(@sources)) = @include
                   AND state IN ('succeeded', 'failed', 'skipped')`,
			Replace: `                 WHERE created_at < @cutoff AND (source <> ANY(@sources)) = @include
                   AND state IN ('succeeded', 'failed', 'skipped')`,
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestRetentionOfFinishedSendsFollowsTheirSource$",
	},
	{
		Name:    "kafka-name-leading-control-taken",
		Promise: promiseDuplicate,
		File:    "internal/kafkasource/message.go",
		// An id or type header that begins with a control character is
		// taken as a name.
		Edits: []Edit{{
			Find:    "strings.IndexFunc(v, unicode.IsControl) < 0 {",
			Replace: "strings.IndexFunc(v, unicode.IsControl) <= 0 {",
		}},
		Pkgs: []string{"./internal/kafkasource"},
		Run:  "^TestAnIDOrTypeThatBeginsWithAControlCharacterIsNoName$",
	},
	{
		Name:    "listen-name-refused",
		Promise: promiseCrossSite,
		File:    "internal/admin/hosts.go",
		// The listen address's name is allowed only when empty: a
		// listener on admin.internal refuses its own name.
		Edits: []Edit{{
			Find:    `if h, _, err := net.SplitHostPort(listen); err == nil && h != "" {`,
			Replace: `if h, _, err := net.SplitHostPort(listen); err == nil && h == "" {`,
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestTheListenAddressesNameIsAllowed$",
	},
	{
		Name:    "host-name-leading-dot-accepted",
		Promise: promiseCrossSite,
		File:    "internal/admin/hosts.go",
		// admin.hosts accepts ".example.com", a name no Host matches.
		Edits: []Edit{{
			Find:    `strings.ContainsAny(name, "*/:@ ") || strings.HasPrefix(name, ".")`,
			Replace: `strings.ContainsAny(name, "*/:@ ") && strings.HasPrefix(name, ".")`,
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestHostsMustBeNames$",
	},
	{
		Name:    "star-route-sources-swapped",
		Promise: promiseRoutes,
		File:    "internal/destination/routes.go",
		// A "*" route is taken for a source named "*", and every other
		// route for every source.
		Edits: []Edit{{
			Find:    `if route.Source == "*" {`,
			Replace: `if route.Source != "*" {`,
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestAStarRouteTakesEverySource$",
	},
}
