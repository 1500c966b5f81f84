package main

// The promise of this file's mutations, which mutations.go does not name.
const promiseKafkaLag = "A Kafka source's lag alert reads the group's newest lag"

// kafkaLagMutations break the kafka_lag alert: what its consumers store,
// which rows the rule sums and how long it waits.
var kafkaLagMutations = []Mutation{
	{
		Name:    "kafka-lag-not-stored",
		Promise: promiseKafkaLag,
		File:    "internal/kafkasource/lag.go",
		// The lag is read and told to the gauge, never stored: the rule
		// sees none, however far behind the source falls.
		Edits: []Edit{{
			Find:    "\tc.storeLag(ctx, r)\n",
			Replace: "\t_ = r\n",
		}},
		Pkgs: []string{"./internal/kafkasource"},
		Run:  "^TestLagStoredWholeByEveryReaderOfTheGroup$",
	},
	{
		Name:    "kafka-lag-older-reading-wins",
		Promise: promiseKafkaLag,
		File:    "internal/kafkasource/sql/lag_store.sql",
		// A reading committed after a newer one of another replica
		// overwrites its figures: the newest reading is no longer whole.
		Edits: []Edit{{
			Find:    "WHERE kafka_lag.observed_at <= excluded.observed_at",
			Replace: "WHERE true",
		}},
		Pkgs: []string{"./internal/kafkasource"},
		Run:  "^TestACrossedLagReadingLeavesTheNewestWhole$",
	},
	{
		Name:    "kafka-lag-older-rows-counted",
		Promise: promiseKafkaLag,
		File:    "internal/alerts/sql/conditions.sql",
		// Every row of the source is summed, a row an older reading left
		// beside the newest included.
		Edits: []Edit{{
			Find:    "      AND k.observed_at = (SELECT max(n.observed_at) FROM kafka_lag n WHERE n.source = r.source)) l",
			Replace: "      ) l",
		}},
		Pkgs: []string{"./internal/alerts"},
		Run:  "^TestKafkaLagCountsTheNewestReadingOnly$",
	},
	{
		Name:    "kafka-lag-ignores-for",
		Promise: promiseKafkaLag,
		File:    "internal/alerts/sql/open.sql",
		// The rule's for is never matched: the lag opens its alert at the
		// first evaluation that finds it over over.
		Edits: []Edit{{
			Find:    "WHEN 'kafka_lag' THEN coalesce(",
			Replace: "WHEN 'kafka_lag, never' THEN coalesce(",
		}},
		Pkgs: []string{"./internal/alerts"},
		Run:  "^TestKafkaLagOpensAfterItsForAndResolves$",
	},
}
