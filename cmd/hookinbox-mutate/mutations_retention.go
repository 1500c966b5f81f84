package main

// retentionMutations are retention's and the partition drop's, which never
// delete unfinished work, and the rescue of work a crash stranded.
var retentionMutations = []Mutation{
	{
		Name:    "retention-deletes-failed",
		Promise: promiseRetention,
		File:    "internal/riverdb/sql/retention_inbox.sql",
		Edits: []Edit{{
			Find:    "o.status IN ('processed', 'skipped'))",
			Replace: "o.status IN ('processed', 'skipped', 'failed'))",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestRetentionDeletesOnlyExpiredHandledRows$",
	},
	{
		Name:    "retention-ignores-follow-ups",
		Promise: promiseRetention,
		File:    "internal/riverdb/sql/retention_inbox.sql",
		Edits: []Edit{{
			Find:    "WHERE s.source = i.source AND s.delivery_id = i.delivery_id",
			Replace: "WHERE FALSE AND s.source = i.source AND s.delivery_id = i.delivery_id",
		}},
		Pkgs: []string{"./handlers"},
		Run:  "^TestRetentionHoldsADeliveryWhoseFollowUpStillRetries$",
	},
	{
		Name:    "retention-ignores-sends",
		Promise: promiseRetention,
		File:    "internal/riverdb/sql/retention_inbox.sql",
		Edits: []Edit{{
			Find:    "AND d.state IN ('waiting', 'pending', 'held')",
			Replace: "AND FALSE",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestRetentionHoldsUnfinishedSends$",
	},
	{
		Name:    "partition-drop-ignores-work",
		Promise: promiseRetention,
		File:    "internal/inbox/partitions_retire.go",
		Edits: []Edit{{
			Find:    "if undecided || busy {",
			Replace: "if false && (undecided || busy) {",
		}, {
			Find:    "ps.busy(ctx, tx, p); err != nil || busy {",
			Replace: "ps.busy(ctx, tx, p); err != nil || (false && busy) {",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestRetentionKeepsAPartitionWithWorkLeft$",
	},
	{
		Name:    "partition-drop-ignores-sends",
		Promise: promiseRetention,
		File:    "internal/riverdb/sql/partition_busy.sql",
		Edits: []Edit{{
			Find:    "WHERE d.state IN ('waiting', 'pending', 'held')",
			Replace: "WHERE FALSE AND d.state IN ('waiting', 'pending', 'held')",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestRetentionKeepsAPartitionWithWorkLeft$",
	},
	{
		Name:    "partition-drop-ignores-steps",
		Promise: promiseRetention,
		File:    "internal/riverdb/sql/partition_busy.sql",
		Edits: []Edit{{
			Find:    "WHERE j.state IN ('available', 'pending', 'retryable', 'running', 'scheduled')",
			Replace: "WHERE FALSE AND j.state IN ('available', 'pending', 'retryable', 'running', 'scheduled')",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestRetentionKeepsAPartitionWithWorkLeft$",
	},
	{
		Name:    "partition-dropped-unchecked",
		Promise: promiseAcked,
		File:    "internal/inbox/partitions_retire.go",
		Edits: []Edit{{
			Find:    "if err != nil || (has && !newest.Before(cutoff)) {",
			Replace: "if err != nil || (false && has && !newest.Before(cutoff)) {",
		}, {
			Find:    "ps.busy(ctx, tx, p); err != nil || busy {",
			Replace: "ps.busy(ctx, tx, p); err != nil || (false && busy) {",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestRetentionDropsNoPartitionUnderAnInsert$",
	},
	{
		Name:    "retention-ignores-replays",
		Promise: promiseRetention,
		File:    "internal/riverdb/sql/retention_inbox.sql",
		Edits: []Edit{{
			Find:    "WHERE j.kind = 'process_delivery' AND (j.args->>'inbox_id')::bigint = i.id",
			Replace: "WHERE FALSE AND j.kind = 'process_delivery' AND (j.args->>'inbox_id')::bigint = i.id",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestRetentionHoldsARowWithAQueuedReplay$",
	},
	{
		Name:    "rescue-setting-dropped",
		Promise: promiseRescue,
		File:    "jobs/client.go",
		Edits: []Edit{{
			Find:    " RescueStuckJobsAfter: cfg.RescueStuckAfter.Std(),",
			Replace: "",
		}},
		Pkgs: []string{"./drills"},
		Run:  "^TestStrandedJob",
	},
}
