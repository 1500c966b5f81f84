package main

// genpass2Mutations close more gaps that generated passes found (see
// docs/guarantees.md, Generated mutations): each was a generated mutant
// that survived its row's tests.
var genpass2Mutations = []Mutation{
	{
		Name:    "batch-vanished-key-commits-jobless",
		Promise: promiseRowAndJob,
		File:    "ingest/batch.go",
		// A key gone between the batch's insert and its read ends the
		// batch with no error, before its jobs: the caller commits the
		// rows it accepted without them.
		Edits: []Edit{{
			Find:    `return nil, nil, fmt.Errorf("inbox row for %s/%s: %w", k.Source, k.DeliveryID, errRowVanished)`,
			Replace: `return nil, nil, nil`,
		}},
		Pkgs: []string{"./ingest"},
		Run:  "^TestRecordManyTxWhoseKeyVanishesLeavesNoRowWithoutItsJob$",
	},
	{
		Name:    "resource-gate-turn-forgotten-early",
		Promise: promiseBusyResource,
		File:    "jobs/resource_gate.go",
		// A resource's turn is forgotten while its last holder still holds
		// it: the next delivery of the resource gets a fresh turn at once,
		// a second waiter in the database.
		Edits: []Edit{{
			Find:    "if t.users--; t.users == 0 {",
			Replace: "if t.users--; t.users == 1 {",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestAResourceGateTurnIsHeldUntilItsLastHolderLeaves$",
	},
	{
		Name:    "saga-final-statuses-ignored",
		Promise: promiseCompensate,
		File:    "handlers/stripe/saga.go",
		// The saga's configured final statuses are replaced by the
		// default: a fulfillment refused with one of them fails the saga,
		// never compensated.
		Edits: []Edit{{
			Find:    "if cfg.FinalStatuses == nil {",
			Replace: "if cfg.FinalStatuses != nil {",
		}},
		Pkgs: []string{"./handlers/stripe"},
		Run:  "^TestSagaConfiguredFinalStatusCompensates$",
	},
}
