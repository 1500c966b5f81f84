package main

// The promise of this file's mutations that mutations.go does not name.
const promiseSeenAsStored = "Processing sees a delivery as stored"

// handOffMutations break the hand-off of what ingest stores to processing
// in the same process (internal/inbox.HandOff): what it holds must be
// what the inbox row holds, taken once, within its bound.
var handOffMutations = []Mutation{
	{
		// A delivery recorded alone hands on its headers as received,
		// credentials included.
		Name:    "handoff-headers-as-received",
		Promise: promiseSeenAsStored,
		File:    "ingest/inbox.go",
		Edits:   []Edit{{Find: "in.HandOff.Put(rec.ID, r.Headers, r.Payload)", Replace: "in.HandOff.Put(rec.ID, d.Headers, r.Payload)"}},
		Pkgs:    []string{"./ingest"},
		Run:     "^TestHandOffHoldsWhatTheRowHolds$",
	},
	{
		// Headers the row's jsonb turns into U+FFFD are handed on as
		// received: a handler sees other bytes than the row holds.
		Name:    "handoff-non-utf8-held",
		Promise: promiseSeenAsStored,
		File:    "internal/inbox/handoff.go",
		Edits:   []Edit{{Find: "\t\t\tif !utf8.ValidString(v) {\n", Replace: "\t\t\tif false && !utf8.ValidString(v) {\n"}},
		Pkgs:    []string{"./internal/inbox", "./ingest"},
		Run:     "^(TestHandOffHoldsOnlyWhatTheRowKeepsAsIs|TestHandOffHoldsWhatTheRowHolds)$",
	},
	{
		// A batch's duplicates are handed on again, under the stored
		// delivery's id.
		Name:    "handoff-duplicate-handed-on",
		Promise: promiseSeenAsStored,
		File:    "ingest/batch.go",
		Edits:   []Edit{{Find: "\t\tif rec.Outcome == OutcomeAccepted {\n\t\t\tin.HandOff.Put(", Replace: "\t\tif rec.ID != 0 {\n\t\t\tin.HandOff.Put("}},
		Pkgs:    []string{"./ingest"},
		Run:     "^TestABatchHandsOnWhatItAcceptsOnly$",
	},
	{
		// Nothing is ever dropped: a process whose deliveries another
		// replica processes grows without a bound.
		Name:    "handoff-unbounded",
		Promise: promiseSeenAsStored,
		File:    "internal/inbox/handoff.go",
		Edits:   []Edit{{Find: "\th.bytes += size\n\th.evict()\n", Replace: "\th.bytes += size\n"}},
		Pkgs:    []string{"./internal/inbox"},
		Run:     "^TestHandOffIsBounded$",
	},
	{
		// Processing never takes what it was handed: every batch reads
		// the payloads back.
		Name:    "handoff-ignored-by-processing",
		Promise: promiseSeenAsStored,
		File:    "jobs/process_batch.go",
		Edits:   []Edit{{Find: "\t\theaders, payload, ok := handOff.Take(id)\n", Replace: "\t\theaders, payload, ok := http.Header(nil), []byte(nil), false\n"}},
		Pkgs:    []string{"./handlers"},
		Run:     "^TestProcessingTakesWhatIngestHandedOn$",
	},
	{
		// An entry counts only the bytes a client sent: many empty
		// header values hold far more memory than HandOffBytes.
		Name:    "handoff-size-ignores-overheads",
		Promise: promiseSeenAsStored,
		File:    "internal/inbox/handoff.go",
		Edits:   []Edit{{Find: "\t\tsize += headerOverhead + len(k) + valueOverhead*cap(vs)\n", Replace: "\t\tsize += len(k)\n"}},
		Pkgs:    []string{"./internal/inbox"},
		Run:     "^TestHandOffCountsWhatAnEntryHolds$",
	},
	{
		// A small body in a large buffer counts its length, not the
		// buffer it keeps alive.
		Name:    "handoff-size-counts-length",
		Promise: promiseSeenAsStored,
		File:    "internal/inbox/handoff.go",
		Edits:   []Edit{{Find: "\tsize := entryOverhead + cap(payload)\n", Replace: "\tsize := entryOverhead + len(payload)\n"}},
		Pkgs:    []string{"./internal/inbox"},
		Run:     "^TestHandOffCountsWhatAnEntryHolds$",
	},
	{
		// A header name the row's jsonb would change is held.
		Name:    "handoff-invalid-key-held",
		Promise: promiseSeenAsStored,
		File:    "internal/inbox/handoff.go",
		Edits:   []Edit{{Find: "\t\tif !utf8.ValidString(k) {\n", Replace: "\t\tif false && !utf8.ValidString(k) {\n"}},
		Pkgs:    []string{"./internal/inbox"},
		Run:     "^TestHandOffHoldsOnlyWhatTheRowKeepsAsIs$",
	},
	{
		// A batch that does not commit leaves what it handed on: ids no
		// job will ever take, held until the bound drops them.
		Name:    "handoff-kept-after-failed-batch",
		Promise: promiseSeenAsStored,
		File:    "ingest/batch.go",
		Edits: []Edit{
			{Find: "\t\tin.HandOff.Forget(tx.handedOn...)\n\t\treturn nil, nil, err\n\t}\n\tif err := tx.commit(ctx)", Replace: "\t\treturn nil, nil, err\n\t}\n\tif err := tx.commit(ctx)"},
			{Find: "\tif err := tx.commit(ctx); err != nil {\n\t\tin.HandOff.Forget(tx.handedOn...)\n", Replace: "\tif err := tx.commit(ctx); err != nil {\n"},
		},
		Pkgs: []string{"./ingest"},
		Run:  "^TestABatchHandsOnWhatItAcceptsOnly$",
	},
}
