package main

// routeRowMutations are the order in which an ordered route's line hands
// on its turn.
var routeRowMutations = []Mutation{
	{
		Name:    "ordered-next-is-newest",
		Promise: promiseOrderedSends,
		File:    "handlers/destination/sql/chain_finish_many.sql",
		// A finished send hands the turn to its resource's newest waiting
		// send: the ones between go after it, stale (or skipped).
		Edits: []Edit{{
			Find:    "                 ORDER BY s.id\n                 LIMIT 1) AS next_id",
			Replace: "                 ORDER BY s.id DESC\n                 LIMIT 1) AS next_id",
		}},
		Pkgs: []string{"./handlers/destination"},
		Run:  "^(TestAnOrderedChainGoesOldestFirst|TestSendsOfOneResourceFoundTogetherGoOneAtATime)$",
	},
	{
		Name:    "ordered-line-up-newest-first",
		Promise: promiseOrderedSends,
		File:    "handlers/destination/sql/chain_line_up.sql",
		// Of a resource's sends found together, the newest takes the
		// turn: the older ones follow it, stale.
		Edits: []Edit{{
			Find:    "    ORDER BY source, resource_key, id\n",
			Replace: "    ORDER BY source, resource_key, id DESC\n",
		}},
		Pkgs: []string{"./handlers/destination"},
		Run:  "^TestSendsOfOneResourceFoundTogetherGoOneAtATime$",
	},
}
