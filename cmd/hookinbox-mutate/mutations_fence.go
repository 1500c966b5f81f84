package main

// fenceMutations are the fence's and the first publish's: a process acts
// on a look only while the processes of newer configurations cannot have
// counted it gone, and only a process's start finds its configuration
// deployed again.
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
	{
		// A process processes on its last look however old it is.
		Name:    "middleware-ignores-stale-look",
		Promise: promiseRolling,
		File:    "jobs/generation_fence.go",
		Edits: []Edit{{
			Find:    "\treturn g.clock()-time.Duration(g.lookedAt.Load()) > fenceLooks*g.cfg.Every",
			Replace: "\treturn false",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestAProcessWhoseLooksStoppedProcessesNothing$",
	},
	{
		// The fence comes only as others count the process gone: no margin.
		Name:    "fence-as-late-as-gone",
		Promise: promiseRolling,
		File:    "jobs/generation_fence.go",
		Edits: []Edit{{
			Find:    "const fenceLooks = 6",
			Replace: "const fenceLooks = generationLiveFactor",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestAProcessWhoseLooksStoppedProcessesNothing$",
	},
	{
		// A process processes before its first look, on Prepare's answer.
		Name:    "never-looked-not-fenced",
		Promise: promiseRolling,
		File:    "jobs/generation_fence.go",
		Edits: []Edit{{
			Find:    "\tif !g.lookedOnce.Load() {\n\t\treturn true\n\t}",
			Replace: "\tif !g.lookedOnce.Load() {\n\t\treturn false\n\t}",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestAReplicaProcessesNothingBeforeItsFirstLook$",
	},
	{
		// A fence's snoozes count toward MaxDeferrals.
		Name:    "fenced-snoozes-count-as-deferrals",
		Promise: promiseRolling,
		File:    "jobs/generation.go",
		Edits: []Edit{{
			Find:    "riverdb.Snoozes(job) - fencedSnoozes(job)",
			Replace: "riverdb.Snoozes(job)",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestFencedSnoozesDoNotCountTowardMaxDeferrals$",
	},
	{
		// A fence's snooze is not told apart from an outdated process's.
		Name:    "fence-snooze-unrecorded",
		Promise: promiseRolling,
		File:    "jobs/generation_fence.go",
		Edits: []Edit{{
			Find:    "\t_ = river.MetadataSet(ctx, fenceKey, fencedSnoozes(job)+1)\n",
			Replace: "",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestAFencedSnoozeIsRecordedOnTheJob$",
	},
}
