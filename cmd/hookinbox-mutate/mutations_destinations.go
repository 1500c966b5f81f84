package main

// destinationMutations are the destinations': one send per delivery, each
// request counted once, limits across replicas, a pause, and redirects
// never followed.
var destinationMutations = []Mutation{
	{
		Name:    "send-unique-per-attempt",
		Promise: promiseSendOnce,
		File:    "migrations/008_destinations.up.sql",
		Edits: []Edit{{
			Find:    "CONSTRAINT destination_send_once UNIQUE (source, delivery_id, destination)",
			Replace: "CONSTRAINT destination_send_once UNIQUE (source, delivery_id, destination, created_at)",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestRetriesKeepOneKeyAndOneEffect$",
	},
	{
		Name:    "claim-takes-a-send-in-flight",
		Promise: promiseSendOnce,
		File:    "internal/destination/sql/send_claim.sql",
		Edits: []Edit{{
			Find:    "WHERE sl.destination = @destination AND sl.claimed_until > t.now AND sl.send_id IS NOT NULL",
			Replace: "WHERE false",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestEverySendOnceWhileOthersAreInFlight$",
	},
	{
		Name:    "cycle-without-transaction",
		Promise: promiseSendOnce,
		File:    "internal/destination/cycle.go",
		// Each round trip of a sender's cycle commits by itself: the state
		// row's lock ends before the claim it guards.
		Edits: []Edit{{
			Find:    "\ttx.Queue(\"BEGIN\")\n",
			Replace: "",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestACycleRecordsAndClaimsInOneTransaction$",
	},
	{
		Name:    "rate-slots-after-commit",
		Promise: promiseLimits,
		File:    "internal/destination/cycle.go",
		// The claim commits in its second round trip and the rate slots it
		// took are written after, outside its transaction.
		Edits: []Edit{{
			Find:    `"hand on turns, claim sends", !mayTakeSlots)`,
			Replace: `"hand on turns, claim sends", true)`,
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestARateLimitedClaimTakesItsSlotsInItsTransaction$",
	},
	{
		Name:    "record-again-adds-attempts",
		Promise: promiseCountOnce,
		File:    "internal/destination/sql/attempts_insert.sql",
		Edits:   []Edit{{Find: "WHERE NOT @again::boolean", Replace: "WHERE true"}},
		Pkgs:    []string{"./internal/destination"},
		Run:     "^TestARecordTriedAgainAddsNothingTwice$",
	},
	{
		Name:    "record-again-counts-failures",
		Promise: promiseCountOnce,
		File:    "internal/destination/sql/circuit_failure.sql",
		Edits:   []Edit{{Find: "AND (NOT @again::boolean", Replace: "AND (true"}},
		Pkgs:    []string{"./internal/destination"},
		Run:     "^TestARecordTriedAgainAddsNothingTwice$",
	},
	{
		Name:    "circuit-counts-unrequested",
		Promise: promiseCountOnce,
		File:    "internal/destination/record.go",
		Edits:   []Edit{{Find: "return !r.skipped && !r.gone && !r.filtered && r.routeErr == nil", Replace: "return !r.skipped && !r.gone"}},
		Pkgs:    []string{"./internal/destination"},
		Run:     "^TestARecordTriedAgainAddsNothingTwice$",
	},
	{
		Name:    "pause-ignored",
		Promise: promisePause,
		File:    "internal/destination/claim.go",
		Edits: []Edit{{
			Find:    "if lk.paused {",
			Replace: "if lk.paused && false {",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestPauseHoldsAndResumeSends$",
	},
	{
		Name:    "in-flight-limit-ignored",
		Promise: promiseLimits,
		File:    "internal/destination/claim.go",
		// The slots hold the limit by themselves, and the count of the
		// requests in flight holds it too: more slots than max_in_flight,
		// all used, and the count ignored.
		Edits: []Edit{{
			Find:    `"destination": d.Name, "slots": d.MaxInFlight}`,
			Replace: `"destination": d.Name, "slots": d.MaxInFlight + 64}`,
		}, {
			Find:    "free := d.MaxInFlight - lk.inFlight",
			Replace: "free := d.MaxInFlight - lk.inFlight + 1<<20",
		}, {
			Find:    `"slots": d.MaxInFlight, "limit": n`,
			Replace: `"slots": d.MaxInFlight + 64, "limit": n`,
		}},
		// TestLimitsHoldAcrossReplicas sets a rate limit that alone keeps
		// fewer requests in flight than max_in_flight: it cannot notice.
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestMaxInFlightBindsAcrossReplicas$",
	},
	{
		Name:    "destination-follows-redirects",
		Promise: promiseRedirect,
		File:    "internal/destination/destination.go",
		Edits: []Edit{{
			Find:    ", CheckRedirect: outbound.CheckRedirect}",
			Replace: "}\n\t\t_ = outbound.CheckRedirect",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestRedirectIsAFailedAttemptNeverFollowed$",
	},
	{
		Name:    "call-follows-redirects",
		Promise: promiseRedirect,
		File:    "handlers/downstream.go",
		Edits: []Edit{{
			Find:    "client = outbound.NoRedirects(client)",
			Replace: "_ = outbound.NoRedirects(client)",
		}},
		Pkgs: []string{"./handlers"},
		Run:  "^TestCallPostNeverFollowsARedirect$",
	},
	{
		Name:    "handler-client-follows-redirects",
		Promise: promiseRedirect,
		File:    "internal/cli/handlers.go",
		Edits: []Edit{{
			Find:    "CheckRedirect: outbound.CheckRedirect}",
			Replace: "CheckRedirect: func(*http.Request, []*http.Request) error { _ = outbound.CheckRedirect; return nil }}",
		}},
		Pkgs: []string{"./internal/cli"},
		Run:  "^TestDepsHTTPClientFollowsNoRedirect$",
	},
}
