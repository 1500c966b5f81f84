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
	{
		Name:    "wildcard-host-matches-look-alikes",
		Promise: promiseCrossSite,
		File:    "internal/admin/hosts.go",
		Edits: []Edit{{
			Find:    `strings.CutPrefix(h, "*")`,
			Replace: `strings.CutPrefix(h, "*.")`,
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestAWildcardHostAllowsItsSubdomainsOnly$",
	},
	{
		Name:    "wildcard-host-matches-inside",
		Promise: promiseCrossSite,
		File:    "internal/admin/hosts.go",
		Edits: []Edit{{
			Find:    "if strings.HasSuffix(host, s) && len(host) > len(s) {",
			Replace: "if strings.Contains(host, s) && len(host) > len(s) {",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestAWildcardHostAllowsItsSubdomainsOnly$",
	},
	{
		Name:    "key-generation-current-retired",
		Promise: promiseDuplicate,
		File:    "jobs/key_generations.go",
		Edits: []Edit{{
			Find:    "break // current, or made ahead",
			Replace: "// current, or made ahead",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestTheCurrentKeyGenerationStaysThoughTheInboxHoldsNoneOfIt$",
	},
}
