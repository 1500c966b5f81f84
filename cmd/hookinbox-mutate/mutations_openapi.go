package main

// The promise of this file's mutation, which mutations.go does not name.
const promiseOpenAPI = "The admin API answers as its OpenAPI document says"

// openAPIMutations change an answer of the admin API that its own tests
// read back through the handler's type, so that only the validation of
// every answer against internal/admin/openapi.yaml can notice.
var openAPIMutations = []Mutation{
	{
		// A field renamed on the wire: TestReplayDelivery decodes the
		// answer into admin.Replay, which is renamed with it.
		Name:    "openapi-replay-field-renamed",
		Promise: promiseOpenAPI,
		File:    "internal/admin/replay.go",
		Edits: []Edit{{
			Find:    "`json:\"job_state\"`",
			Replace: "`json:\"state\"`",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestReplayDelivery$",
	},
}
