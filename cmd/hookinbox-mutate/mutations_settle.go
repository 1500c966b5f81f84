package main

// settleMutations are Settle's: a process of a new configuration reports
// ready once every older process has seen it and stopped fetching
// processing jobs, not after a fixed wait.
var settleMutations = []Mutation{
	{
		// Two of its own looks, however late the older processes' come.
		Name:    "settle-fixed-wait",
		Promise: promiseRolling,
		File:    "jobs/generation_settle.go",
		Edits: []Edit{{
			Find: "\tif g.since.IsZero() {\n\t\treturn errors.New(\"jobs: Settle before Start\")\n\t}",
			Replace: "\tif g.since.IsZero() {\n\t\treturn errors.New(\"jobs: Settle before Start\")\n\t}\n" +
				"\tselect {\n\tcase <-ctx.Done():\n\t\treturn ctx.Err()\n\tcase <-time.After(2 * g.cfg.Every):\n\t\treturn nil\n\t}",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^(TestSettleWaitsForALateLook|TestSettleWaitsForTheOlderProcessToStopFetching|TestSettleGoesOnWithoutAProcessThatWentSilent)$",
	},
	{
		// The processes of other configurations are not waited for.
		Name:    "settle-ignores-other-configs",
		Promise: promiseRolling,
		File:    "jobs/sql/worker_process_unsettled.sql",
		Edits: []Edit{{
			Find:    "WHERE p.fingerprint <> @fingerprint",
			Replace: "WHERE false AND p.fingerprint <> @fingerprint",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^(TestSettleWaitsForALateLook|TestSettleWaitsForTheOlderProcessToStopFetching)$",
	},
	{
		// A look is recorded as soon as it is made, while the deliveries
		// queue is still being removed and its jobs still run.
		Name:    "look-recorded-before-the-queue-stops",
		Promise: promiseRolling,
		File:    "jobs/generation_settle.go",
		Edits: []Edit{{
			Find:    "\tif !g.lookApplied() {",
			Replace: "\tif false && !g.lookApplied() {",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestSettleWaitsForTheOlderProcessToStopFetching$",
	},
	{
		// A process gone silent is waited for as one that will still look.
		Name:    "settle-waits-for-silent-processes",
		Promise: promiseRolling,
		File:    "jobs/generation_settle.go",
		Edits: []Edit{{
			Find:    "\t\tif p.silent {",
			Replace: "\t\tif false && p.silent {",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestSettleGoesOnWithoutAProcessThatWentSilent$",
	},
	{
		// An older binary's processes, which record no looks, are not
		// waited for at all.
		Name:    "settle-skips-older-binaries",
		Promise: promiseRolling,
		File:    "jobs/sql/worker_process_unsettled.sql",
		Edits: []Edit{{
			Find:    "  AND now() < @since::timestamptz + @legacy_secs::float8 * interval '1 second'",
			Replace: "  AND false",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestSettleGivesAnOlderBinaryTwoLooks$",
	},
	{
		// A sighting of the configuration counts however long ago it was
		// made, before a redeploy too.
		Name:    "settle-takes-a-sighting-before-a-redeploy",
		Promise: promiseRolling,
		File:    "jobs/sql/worker_process_unsettled.sql",
		Edits: []Edit{{
			Find:    "AND p.looked_at >= mine.first_seen_at) IS NOT TRUE",
			Replace: "AND true) IS NOT TRUE",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestSettleTakesASightingSinceTheConfigurationWasFirstSeen$",
	},
	{
		// The rows of gone processes are kept for ever.
		Name:    "gone-processes-kept",
		Promise: promiseRolling,
		File:    "jobs/sql/worker_config_publish.sql",
		Edits: []Edit{{
			Find:    "    DELETE FROM worker_process WHERE live_until < now() - interval '1 hour' AND id <> @id",
			Replace: "    SELECT 1",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestGoneProcessesAreForgotten$",
	},
	{
		// A process that stopped still holds a newer one's Settle until it
		// goes silent.
		Name:    "stopped-process-never-leaves",
		Promise: promiseRolling,
		File:    "jobs/sql/worker_process_leave.sql",
		Edits: []Edit{{
			Find:    "DELETE FROM worker_process WHERE id = @id",
			Replace: "DELETE FROM worker_process WHERE false AND id = @id",
		}},
		Pkgs: []string{"./jobs", "./internal/cli"},
		Run:  "^(TestSettleDoesNotWaitForAProcessThatLeft|TestServeLeavesOnceItsWorkersStop)$",
	},
	{
		Name:    "serve-stops-without-leaving",
		Promise: promiseRolling,
		File:    "internal/cli/app_run.go",
		Edits: []Edit{{
			Find:    "\t\ta.leave()\n",
			Replace: "",
		}},
		Pkgs: []string{"./internal/cli"},
		Run:  "^TestServeLeavesOnceItsWorkersStop$",
	},
}
