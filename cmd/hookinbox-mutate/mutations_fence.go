package main

// fenceMutations are the first publish's: only a process's start finds
// its configuration deployed again.
var fenceMutations = []Mutation{
	{
		// Every publish, not only a process's first, finds a configuration
		// silent for its live window deployed again: after an outage the
		// last to publish becomes the newest, an older one too.
		Name:    "republish-resets-first-seen",
		Promise: promiseRolling,
		File:    "jobs/sql/worker_config_publish.sql",
		Edits: []Edit{{
			Find:    "    first_seen_at = CASE WHEN @first::boolean\n",
			Replace: "    first_seen_at = CASE WHEN true\n",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestADatabaseOutageDoesNotReorderConfigurations$",
	},
}
