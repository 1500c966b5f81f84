package main

// rollingMutations are a rolling deploy's: outdated replicas step aside,
// and a restarted one neither fails nor works before it looks.
var rollingMutations = []Mutation{
	{
		// An outdated process fetches processing jobs and works them as
		// any other: neither its queue is removed nor its jobs snoozed.
		Name:    "older-config-processes",
		Promise: promiseRolling,
		File:    "jobs/client.go",
		Edits: []Edit{{
			Find:    "rc.Middleware = append(rc.Middleware, cfg.Generation.Middleware())",
			Replace: "_ = cfg.Generation.Middleware()",
		}, {
			Find:    "		cfg.Generation.attach(client.Queues(), queueDeliveries, rc.Queues[queueDeliveries])",
			Replace: "",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestEveryDeliveryAfterTheNewConfigStartsReachesTheNewDestination$",
	},
	{
		// Snoozing alone: the outdated process keeps fetching.
		Name:    "outdated-replica-keeps-fetching",
		Promise: promiseRolling,
		File:    "jobs/client.go",
		Edits: []Edit{{
			Find:    "		cfg.Generation.attach(client.Queues(), queueDeliveries, rc.Queues[queueDeliveries])",
			Replace: "",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestEveryDeliveryAfterTheNewConfigStartsReachesTheNewDestination$",
	},
	{
		// A removal right after River starts hangs River's Stop.
		Name:    "queue-removed-during-river-start",
		Promise: promiseRolling,
		File:    "jobs/generation_queue.go",
		Edits: []Edit{{
			Find:    "	if wait := time.Until(time.Unix(0, q.removeAfter.Load())); wait > 0 {",
			Replace: "	if wait := time.Until(time.Unix(0, q.removeAfter.Load())); false && wait > 0 {",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestProcessingQueueSwitchRecoversFromARefusal$",
	},
	{
		// A refused switch is tried again as if River were in step.
		Name:    "queue-switch-retried-unclean",
		Promise: promiseRolling,
		File:    "jobs/generation_queue.go",
		Edits: []Edit{{
			Find:    "	if q.removed && !q.unsure {",
			Replace: "	if q.removed {",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestProcessingQueueSwitchRecoversFromARefusal$",
	},
	{
		Name:    "wedged-newer-config-stalls-processing",
		Promise: promiseRolling,
		File:    "jobs/generation_queue.go",
		Edits: []Edit{{
			Find:    "			stalled = now.Sub(g.waitingSince) >= g.stallAfter()",
			Replace: "			stalled = false",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestAWedgedNewerConfigDelaysProcessingBoundedly$",
	},
	{
		Name:    "restarted-replica-is-newest",
		Promise: promiseRolling,
		File:    "jobs/sql/worker_config_publish.sql",
		Edits: []Edit{{
			Find:    "THEN now() ELSE worker_config.first_seen_at END",
			Replace: "THEN now() ELSE now() END",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestGenerationNewestIsFirstSeenLast$",
	},
	{
		Name:    "restarted-replica-works-before-it-looks",
		Promise: promiseRolling,
		File:    "jobs/generation.go",
		Edits: []Edit{{
			Find:    "	g.set(true, newest)\n	g.applyQueue() // before River starts: it never fetches from the queue\n	return nil",
			Replace: "	return nil",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestGenerationPrepareBeforeRiverWorks$",
	},
	{
		Name:    "start-fails-unknown-destinations",
		Promise: promiseRolling,
		File:    "internal/destination/sender.go",
		Edits: []Edit{{
			Find: "\tif err := s.sayKnown(ctx); err != nil {\n\t\treturn err\n\t}",
			Replace: "\tif err := s.sayKnown(ctx); err != nil {\n\t\treturn err\n\t}\n" +
				"\t_, _ = s.cfg.Pool.Exec(ctx, `UPDATE destination_send SET state = 'failed', finished_at = now() " +
				"WHERE state IN ('waiting', 'pending', 'held') AND destination <> ALL($1)`, s.Names())",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^(TestAReplicaWithAnOlderConfigLeavesANewDestinationsSendsAlone|TestAnUnknownDestinationsSendsWaitForAnOperator)$",
	},
	{
		Name:    "abandon-ignores-live-process",
		Promise: promiseRolling,
		File:    "internal/destination/known.go",
		Edits: []Edit{{
			Find:    "if live != nil && *live {",
			Replace: "if live != nil && *live && false {",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestAnUnknownDestinationsSendsWaitForAnOperator$",
	},
}
