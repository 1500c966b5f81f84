package main

// routeRowMutations are the routes' choice of a route and its transform,
// and the order in which an ordered route's line hands on its turn.
var routeRowMutations = []Mutation{
	{
		Name:    "ordered-next-is-newest",
		Promise: promiseOrderedSends,
		File:    "internal/destination/sql/chain_finish_many.sql",
		// A finished send hands the turn to its resource's newest waiting
		// send: the ones between go after it, stale (or skipped).
		Edits: []Edit{{
			Find:    "                 ORDER BY s.id\n                 LIMIT 1) AS next_id",
			Replace: "                 ORDER BY s.id DESC\n                 LIMIT 1) AS next_id",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^(TestAnOrderedChainGoesOldestFirst|TestSendsOfOneResourceFoundTogetherGoOneAtATime)$",
	},
	{
		Name:    "ordered-line-up-newest-first",
		Promise: promiseOrderedSends,
		File:    "internal/destination/sql/chain_line_up.sql",
		// Of a resource's sends found together, the newest takes the
		// turn: the older ones follow it, stale.
		Edits: []Edit{{
			Find:    "    ORDER BY source, resource_key, id\n",
			Replace: "    ORDER BY source, resource_key, id DESC\n",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestSendsOfOneResourceFoundTogetherGoOneAtATime$",
	},
	{
		Name:    "route-last-match-decides",
		Promise: promiseRoutes,
		File:    "internal/destination/destination.go",
		// Every route to the destination is tried and the last that
		// matches is kept: its transform, ordered and skip_stale.
		Edits: []Edit{{
			Find:    "func (ts targets) routeFor(destination string, in *ExprInput) (t target, ok bool, err error) {",
			Replace: "func (ts targets) routeFor(destination string, in *ExprInput) (decided target, ok bool, err error) {",
		}, {
			Find: `		if match {
			return t, true, nil
		}
	}
	return target{}, false, nil`,
			Replace: `		if match {
			decided, ok = t, true
		}
	}
	return decided, ok, nil`,
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestTheFirstMatchingRouteDecides$",
	},
	{
		Name:    "transform-needs-filter",
		Promise: promiseRoutes,
		File:    "internal/destination/expr.go",
		// A route without a filter sends the delivery as it came, its
		// transform never applied.
		Edits: []Edit{{
			Find:    "	case t.expr == nil || t.expr.transform == nil:",
			Replace: "	case t.expr == nil || t.expr.filter == nil:",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestATransformWithoutAFilterIsWhatIsSent$",
	},
	{
		Name:    "transform-error-filters-out",
		Promise: promiseRoutes,
		File:    "internal/destination/expr.go",
		// A transform that fails at send time skips the send as filtered
		// out: nothing failed, nothing to retry.
		Edits: []Edit{{
			Find: `	if err != nil {
		r.routeErr = err
		return false
	}
	l.Payload`,
			Replace: `	if err != nil {
		r.filtered = true
		return false
	}
	l.Payload`,
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestATransformErrorIsAFailedSendRetriedAfterTheFix$",
	},
}
