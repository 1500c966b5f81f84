package main

// duplicateMutations are a duplicate's found by its body, and the inbox
// keys' copy while an upgrade to the partitioned inbox goes on.
var duplicateMutations = []Mutation{
	{
		Name:    "body-replay-accepted",
		Promise: promiseDuplicate,
		File:    "ingest/inbox.go",
		Edits: []Edit{{
			Find:    "\tif !d.DedupBody {\n\t\treturn nil\n\t}",
			Replace: "\tif !d.DedupBody || true {\n\t\treturn nil\n\t}",
		}},
		Pkgs: []string{"./ingest"},
		Run:  "^(TestBodyReplayedUnderAFreshIDIsADuplicate|TestTwilioBodyReorderedUnderAFreshIDIsADuplicate)$",
	},
	{
		Name:    "upgrade-keys-miss-inserts",
		Promise: promiseDuplicate,
		File:    "migrations/ahead/026_inbox_key_follow.sql",
		Edits: []Edit{{
			Find:    "origin, body_key FROM stored\n",
			Replace: "origin, body_key FROM stored WHERE false\n",
		}},
		Pkgs: []string{"./migrations"},
		Run:  "^TestPrepareCopiesKeysWhileIngestGoesOn$",
	},
	{
		Name:    "upgrade-keys-outlive-deletes",
		Promise: promiseDuplicate,
		File:    "migrations/ahead/026_inbox_key_follow.sql",
		Edits: []Edit{{
			Find:    "WHERE k.source = g.source",
			Replace: "WHERE false AND k.source = g.source",
		}},
		Pkgs: []string{"./migrations"},
		Run:  "^TestPrepareCopiesKeysWhileIngestGoesOn$",
	},
	{
		Name:    "upgrade-copy-ignores-deletes",
		Promise: promiseDuplicate,
		File:    "migrations/ahead/026_inbox_key_follow.sql",
		Edits: []Edit{{
			Find:    "    IF obj_description('inbox_key'::regclass, 'pg_class') = 'hookinbox: every key of the inbox' THEN",
			Replace: "    IF TRUE THEN",
		}},
		Pkgs: []string{"./migrations"},
		Run:  "^(TestPrepareCopyWaitsForADeleteUnderWay|TestADeleteWaitsForAKeyBeingCopied)$",
	},
	{
		Name:    "upgrade-delete-spares-copied-key",
		Promise: promiseDuplicate,
		File:    "migrations/ahead/026_inbox_key_follow.sql",
		Edits: []Edit{{
			Find:    "WHERE inbox_key.inbox_id = -EXCLUDED.inbox_id",
			Replace: "WHERE false",
		}},
		Pkgs: []string{"./migrations"},
		Run:  "^TestADeleteWaitsForAKeyBeingCopied$",
	},
	{
		Name:    "upgrade-resend-keeps-tombstone",
		Promise: promiseDuplicate,
		File:    "migrations/ahead/026_inbox_key_follow.sql",
		Edits: []Edit{{
			Find:    "WHERE inbox_key.inbox_id < 0",
			Replace: "WHERE false",
		}},
		Pkgs: []string{"./migrations"},
		Run:  "^TestADeliveryStoredAgainReplacesItsTombstone$",
	},
	{
		Name:    "upgrade-tombstones-kept",
		Promise: promiseDuplicate,
		File:    "migrations/026_inbox_partitions.up.sql",
		Edits: []Edit{{
			Find:    "DELETE FROM inbox_key WHERE inbox_id < 0;\n",
			Replace: "",
		}},
		Pkgs: []string{"./migrations"},
		Run:  "^TestMigrationFinishesAnUnfinishedCopy$",
	},
}
