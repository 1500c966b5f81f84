package main

// orderMutations are per-resource order's, and a busy resource's place
// beside intake and other resources.
var orderMutations = []Mutation{
	{
		Name:    "resource-lock-per-delivery",
		Promise: promiseOrder,
		File:    "handlers/pipeline.go",
		Edits: []Edit{{
			Find:    `return fmt.Sprintf("r:%d:%s:%s", len(d.Source), d.Source, r.Key)`,
			Replace: `return fmt.Sprintf("r:%d:%s:%s:%s", len(d.Source), d.Source, r.Key, d.DeliveryID)`,
		}},
		Pkgs: []string{"./handlers"},
		Run:  "^TestResourceSerialisationAndParallelism$",
	},
	{
		Name:    "resource-busy-taken-as-held",
		Promise: promiseOrder,
		File:    "handlers/pipeline.go",
		Edits: []Edit{{
			Find:    "\tif !locked {\n\t\treturn &ResourceBusyError{LockKey: key}",
			Replace: "\tif !locked && key == \"\" {\n\t\treturn &ResourceBusyError{LockKey: key}",
		}},
		Pkgs: []string{"./handlers"},
		Run:  "^(TestResourceSerialisationAndParallelism|TestDeliveriesWaitingForAResourceLeaveThePoolToOthers)$",
	},
	{
		Name:    "resource-wait-holds-connection",
		Promise: promiseBusyResource,
		File:    "jobs/process_delivery.go",
		Edits: []Edit{{
			Find:    "w.processTx(ctx, job, w.registry.TryProcess)",
			Replace: "w.processTx(ctx, job, w.registry.Process)",
		}},
		Pkgs: []string{"./handlers"},
		Run:  "^TestDeliveriesWaitingForAResourceLeaveThePoolToOthers$",
	},
	{
		Name:    "resource-gate-open",
		Promise: promiseBusyResource,
		File:    "jobs/resource_gate.go",
		Edits: []Edit{{
			Find:    "\tcase t.token <- struct{}{}:\n\t\treturn func() { <-t.token; g.leave(key, t) }, nil",
			Replace: "\tdefault:\n\t\treturn func() { g.leave(key, t) }, nil",
		}},
		Pkgs: []string{"./handlers"},
		Run:  "^TestDeliveriesWaitingForAResourceLeaveThePoolToOthers$",
	},
	{
		Name:    "resource-version-moves-back",
		Promise: promiseOrder,
		File:    "handlers/sql/resource_version_upsert.sql",
		Edits: []Edit{{
			Find:    "WHERE v.applied_at IS NULL\n",
			Replace: "WHERE TRUE\n",
		}},
		// The mirror guards its own rows: the guard's loss shows only in
		// the recorded version, and in the next event judged against the
		// version a stale one left.
		Pkgs: []string{"./handlers"},
		Run:  "^TestResourceVersionOnlyMovesForward$",
	},
	{
		Name:    "stale-check-ignores-time",
		Promise: promiseOrder,
		File:    "handlers/resource.go",
		Edits: []Edit{{
			Find:    "return r.At.Before(*v.At)",
			Replace: "return false",
		}},
		Pkgs: []string{"./handlers"},
		Run:  "^(TestMirrorOutOfOrderKeepsNewest|TestEveryEventHandlerSeesStaleEvents)$",
	},
}
