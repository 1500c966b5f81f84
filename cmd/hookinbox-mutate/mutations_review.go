package main

// The promise of this file's mutation that mutations.go does not name.
const promiseForwarded = "A destination gets the delivery's body and Content-Type as received"

// reviewMutations break a repeated answer's headers, what the OpenAPI
// document requires of an answer, and a send's Content-Type: each is
// noticed by its own test or by the document's validation of every
// answer.
var reviewMutations = []Mutation{
	{
		// A repeat of a replay request answers the stored body without
		// the first answer's Location.
		Name:    "idempotency-repeat-without-location",
		Promise: promiseIdempotency,
		File:    "internal/admin/idempotency.go",
		Edits: []Edit{{
			Find:    "\t\t\t\t\tc.Set(fiber.HeaderLocation, loc)\n",
			Replace: "\t\t\t\t\t_ = loc\n",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestIdempotencyKeyContract$",
	},
	{
		// A bulk replay's 202 without Location: the document requires it.
		Name:    "openapi-bulk-replay-without-location",
		Promise: promiseOpenAPI,
		File:    "internal/admin/replay.go",
		Edits: []Edit{{
			Find:    "\tc.Set(fiber.HeaderLocation, bulkReplayPath(b.ID))\n",
			Replace: "",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestBulkReplayRequiresJSONContentType$",
	},
	{
		// A pause answers a state that contradicts its paused: the
		// document ties the two.
		Name:    "openapi-paused-state-contradicts",
		Promise: promiseOpenAPI,
		File:    "internal/admin/destinations.go",
		Edits: []Edit{
			{Find: "state := \"active\"", Replace: "state := \"paused\""},
			{Find: "\t\t\tstate = \"paused\"\n", Replace: "\t\t\tstate = \"active\"\n"},
		},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestDestinationsAdmin$",
	},
	{
		// A send reads the Content-Type under its canonical name only: a
		// Kafka producer's content-type is lost at the send.
		Name:    "send-content-type-canonical-only",
		Promise: promiseForwarded,
		File:    "migrations/035_delivery_views.up.sql",
		Edits: []Edit{{
			Find:    "WHERE lower(h.key) = 'content-type'",
			Replace: "WHERE h.key = 'Content-Type'",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestSendKeepsAContentTypeStoredInLowerCase$",
	},
}

// reviewAlertMutations make a rule's condition count what it does not
// name, so that an alert opens or stays closed when it should not.
var reviewAlertMutations = []Mutation{
	{
		// One busy source's deliveries end every source's silence.
		Name:    "alert-silence-ended-by-any-source",
		Promise: promiseAlerts,
		File:    "internal/alerts/sql/conditions.sql",
		Edits: []Edit{{
			Find:    "WHERE r.source = src.name AND r.received_at > now() - interval '1 minute'",
			Replace: "WHERE r.received_at > now() - interval '1 minute'",
		}},
		Pkgs: []string{"./internal/alerts"},
		Run:  "^TestSourceSilentEndsOnlyOnTheSourcesOwnSentDelivery$",
	},
	{
		// Skipped deliveries are counted as failed ones.
		Name:    "alert-failed-counts-skipped",
		Promise: promiseAlerts,
		File:    "migrations/035_delivery_views.up.sql",
		Edits: []Edit{{
			Find:    "WHERE o.status = 'failed'",
			Replace: "WHERE o.status <> 'processed'",
		}},
		Pkgs: []string{"./internal/alerts"},
		Run:  "^TestDeliveriesFailedCountsFailuresOnly$",
	},
}
