package main

// kafkaRowMutations break the Kafka source's and the Kafka destination's
// part of their promises: what a stop, a header's case, the producer's
// acks and a destination's default key decide.
var kafkaRowMutations = []Mutation{
	{
		Name:    "kafka-stop-commits-unrecorded",
		Promise: promiseOffsets,
		File:    "internal/kafkasource/consumer.go",
		// A stop during an outage commits the offsets of the batch it
		// never stored.
		Edits: []Edit{{
			Find:    "				c.client.AllowRebalance()\n				return nil // ctx ended during a database outage: nothing committed",
			Replace: "				c.commit(ctx)\n				c.client.AllowRebalance()\n				return nil",
		}},
		Pkgs: []string{"./internal/kafkasource"},
		Run:  "^TestStopDuringADatabaseOutageCommitsNothing$",
	},
	{
		Name:    "kafka-redact-header-case",
		Promise: promiseSecrets,
		File:    "internal/kafkasource/message.go",
		// A message's header name is looked up as the producer spelled
		// it: "X-Api-Key" is stored, "x-api-key" is not.
		Edits: []Edit{{
			Find:    "		if redacted[strings.ToLower(kh.Key)] {",
			Replace: "		if redacted[kh.Key] {",
		}},
		Pkgs: []string{"./internal/kafkasource"},
		Run:  "^TestRedactedHeadersAreDroppedInAnyCase$",
	},
	{
		Name:    "kafka-redact-config-case",
		Promise: promiseSecrets,
		File:    "internal/kafkasource/consumer.go",
		// redact_headers is kept as configured: a name with a capital
		// letter in it matches no header.
		Edits: []Edit{{
			Find:    "		redacted[strings.ToLower(name)] = true",
			Replace: "		redacted[strings.TrimSpace(name)] = true",
		}},
		Pkgs: []string{"./internal/kafkasource"},
		Run:  "^TestRedactedHeadersAreDroppedInAnyCase$",
	},
	{
		Name:    "kafka-id-header-case",
		Promise: promiseDuplicate,
		File:    "internal/kafkasource/message.go",
		// The delivery id header is matched as configured only: an
		// event sent again under "Event_ID" falls back to its offset id,
		// a second delivery.
		Edits: []Edit{{
			Find:    "		if strings.EqualFold(h.Key, name) {",
			Replace: "		if h.Key == name {",
		}},
		Pkgs: []string{"./internal/kafkasource"},
		Run:  "^TestDeliveryIDAndTypeHeadersMatchInAnyCase$",
	},
	{
		Name:    "kafka-acks-leader-only",
		Promise: promiseSendOnce,
		File:    "internal/destination/broker_kafka.go",
		// The leader's word is enough, and a retry is a new message: a
		// send recorded succeeded may be lost with its leader.
		Edits: []Edit{{
			Find:    "		kgo.RequiredAcks(kgo.AllISRAcks()),",
			Replace: "		kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestKafkaPublisherWaitsForReplicasAndRetriesIdempotently$",
	},
	{
		Name:    "kafka-producer-not-idempotent",
		Promise: promiseSendOnce,
		File:    "internal/destination/broker_kafka.go",
		// Acks from every replica, but a retry of a produce the broker
		// stored is stored again.
		Edits: []Edit{{
			Find:    "		kgo.RequiredAcks(kgo.AllISRAcks()),",
			Replace: "		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite(),",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestKafkaPublisherWaitsForReplicasAndRetriesIdempotently$",
	},
	{
		Name:    "kafka-default-key-delivery",
		Promise: promiseOrderedSends,
		File:    "internal/destination/broker.go",
		// A destination that leaves kafka.key out keys its messages by
		// delivery id: one resource's events spread over partitions.
		Edits: []Edit{{
			Find:    `d.Kafka.Key == "delivery"`,
			Replace: `d.Kafka.Key != "resource"`,
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestKafkaDestinationKeepsEachResourcesOrderInItsPartition$",
	},
	{
		Name:    "kafka-producer-id-takes-offset-id",
		Promise: promiseDuplicate,
		File:    "internal/kafkasource/message.go",
		// A producer's id is stored as sent, whatever its shape: one
		// naming a message still to come makes that message a conflict.
		Edits: []Edit{{
			Find:    `	if offsetShaped.MatchString(v) || strings.HasPrefix(v, "~") {`,
			Replace: `	if false {`,
		}},
		Pkgs: []string{"./internal/kafkasource"},
		Run:  "^TestProducerIDsNeverTakeAnOffsetID$",
	},
}
