package main

// visibleMutations are a failed send's, in the lists of deliveries: a
// route that fails to evaluate leaves its delivery processed, and only
// these make it findable there.
var visibleMutations = []Mutation{
	{
		Name:    "send-failed-filter-ignored",
		Promise: promiseRoutes,
		File:    "internal/inbox/deliveries.go",
		Edits: []Edit{{
			Find:    `	case f.FailedSends:`,
			Replace: `	case false:`,
		}},
		Pkgs: []string{"./internal/cli"},
		Run:  "^TestRouteThatFailsIsVisibleInEveryList$",
	},
	{
		Name:    "list-rows-without-failed-sends",
		Promise: promiseRoutes,
		File:    "internal/admin/deliveries.go",
		Edits: []Edit{{
			Find:    `		page.Items[i].FailedSends = failed[keys[i]]`,
			Replace: `		page.Items[i].FailedSends = failed[destination.DeliveryKey{}]`,
		}},
		Pkgs: []string{"./internal/cli"},
		Run:  "^TestRouteThatFailsIsVisibleInEveryList$",
	},
	{
		Name:    "cli-row-without-failed-send",
		Promise: promiseRoutes,
		File:    "internal/cli/admin_cli.go",
		Edits: []Edit{{
			Find:    `		if len(d.Failed) > 0 {`,
			Replace: `		if len(d.Failed) > 1 {`,
		}},
		Pkgs: []string{"./internal/cli"},
		Run:  "^TestRouteThatFailsIsVisibleInEveryList$",
	},
	{
		Name:    "destination-status-without-failed-send",
		Promise: promiseRoutes,
		File:    "internal/destination/ops.go",
		Edits: []Edit{{
			Find:    `			st.LastFailedSend = &failed`,
			Replace: `			_ = &failed`,
		}},
		Pkgs: []string{"./internal/cli"},
		Run:  "^TestRouteThatFailsIsVisibleInEveryList$",
	},
}
