package main

// retentionRowMutations are retention's partition drops', the admin
// listener's Host names', the key generations' and the alerts'.
var retentionRowMutations = []Mutation{
	{
		Name:    "partition-drop-ignores-replays",
		Promise: promiseRetention,
		File:    "jobs/sql/partition_busy.sql",
		Edits: []Edit{{
			Find:    "WHERE j.kind = 'process_delivery' AND j.state NOT IN",
			Replace: "WHERE j.kind = 'process_deliveries' AND j.state NOT IN",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestRetentionKeepsAPartitionWithWorkLeft$",
	},
}
