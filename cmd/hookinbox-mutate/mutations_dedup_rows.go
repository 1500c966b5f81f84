package main

// dedupRowMutations are body dedup's event type rule's.
var dedupRowMutations = []Mutation{
	{
		Name:    "body-key-unsigned-type",
		Promise: promiseDuplicate,
		File:    "ingest/inbox.go",
		Edits: []Edit{{
			Find:    "\tif !d.DedupBodyByType {\n\t\treturn content[:]\n\t}",
			Replace: "\tif !d.DedupBodyByType && false {\n\t\treturn content[:]\n\t}",
		}},
		Pkgs: []string{"./ingest"},
		Run:  "^TestBodyReplayedUnderAnotherUnsignedTypeIsADuplicate$",
	},
	{
		Name:    "body-key-type-not-derived",
		Promise: promiseDuplicate,
		File:    "ingest/server.go",
		Edits: []Edit{{
			Find:    "		src.DedupBodiesByType = src.DedupBodiesByType || verify.DedupBodyByType(src.Provider, nil)\n",
			Replace: "",
		}},
		Pkgs: []string{"./ingest"},
		Run:  "^TestBodyReplayedUnderAFreshIDIsADuplicate$",
	},
	{
		Name:    "body-key-type-flag-ignored",
		Promise: promiseDuplicate,
		File:    "ingest/receive.go",
		Edits: []Edit{{
			Find:    "DedupBodyByType: src.DedupBodiesByType,",
			Replace: "DedupBodyByType: true,",
		}},
		Pkgs: []string{"./ingest"},
		Run:  "^TestBodyReplayedUnderAnotherUnsignedTypeIsADuplicate$",
	},
	{
		Name:    "body-key-type-unwired",
		Promise: promiseDuplicate,
		File:    "internal/cli/fromconfig.go",
		Edits: []Edit{{
			Find:    "DedupBodiesByType: s.DedupBodiesByType()})",
			Replace: "DedupBodiesByType: true})",
		}},
		Pkgs: []string{"./internal/cli"},
		Run:  "^TestServeDedupesAGitHubBodyUnderANewID$",
	},
	{
		Name:    "body-key-header-type-signed",
		Promise: promiseDuplicate,
		File:    "verify/covers.go",
		Edits: []Edit{{
			Find:    "\t\tif typ.JSON == \"\" {\n",
			Replace: "\t\tif typ.JSON == \"\" && false {\n",
		}},
		Pkgs: []string{"./verify"},
		Run:  "^TestDedupBodyByType$",
	},
	{
		Name:    "body-key-shopify-topics-merged",
		Promise: promiseDuplicate,
		File:    "verify/covers.go",
		Edits: []Edit{{
			Find:    "\t\"shopify\":   true,\n",
			Replace: "",
		}},
		Pkgs: []string{"./ingest"},
		Run:  "^TestBodyReplayedUnderAFreshIDIsADuplicate$",
	},
}

// conflictRowMutations are the conflict records' bound's.
var conflictRowMutations = []Mutation{
	{
		Name:    "conflict-index-dropped",
		Promise: promiseBadInput,
		File:    "migrations/033_delivery_conflict_once.up.sql",
		Edits: []Edit{{
			Find:    "CREATE UNIQUE INDEX IF NOT EXISTS delivery_conflict_once_idx ON delivery_conflict (source, delivery_id, payload_sha256);",
			Replace: "",
		}},
		Pkgs: []string{"./ingest"},
		Run:  "^TestRepeatedConflictIsOneRow$",
	},
	{
		Name:    "conflict-copy-uncounted",
		Promise: promiseBadInput,
		File:    "internal/inbox/sql/conflict_insert.sql",
		Edits: []Edit{{
			Find:    "DO UPDATE\nSET copies = delivery_conflict.copies + 1, last_received_at = now()",
			Replace: "DO NOTHING",
		}},
		Pkgs: []string{"./ingest"},
		Run:  "^TestRepeatedConflictIsOneRow$",
	},
	{
		Name:    "conflict-merge-keeps-copies",
		Promise: promiseBadInput,
		File:    "migrations/033_delivery_conflict_once.up.sql",
		Edits: []Edit{{
			Find:    "WHERE c.id = k.id AND k.id <> k.keep;",
			Replace: "WHERE false;",
		}},
		Pkgs: []string{"./migrations"},
		Run:  "^TestDeliveryConflictRowsMerge$",
	},
}
