package main

// kafkaRowMutations break the Kafka source's and the Kafka destination's
// part of their promises: what a stop, a header's case, the producer's
// acks and a destination's default key decide.
var kafkaRowMutations = []Mutation{
	{
		Name:    "kafka-stop-commits-unrecorded",
		Promise: promiseOffsets,
		File:    "ingest/kafka/consumer.go",
		// A stop during an outage commits the offsets of the batch it
		// never stored.
		Edits: []Edit{{
			Find:    "				c.client.AllowRebalance()\n				return nil // ctx ended during a database outage: nothing committed",
			Replace: "				c.commit(ctx)\n				c.client.AllowRebalance()\n				return nil",
		}},
		Pkgs: []string{"./ingest/kafka"},
		Run:  "^TestStopDuringADatabaseOutageCommitsNothing$",
	},
}
