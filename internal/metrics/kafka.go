package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// kafkaMetrics are a Kafka source's: its lag per partition and the
// messages it read.
type kafkaMetrics struct {
	lag  *prometheus.GaugeVec
	read *prometheus.CounterVec
}

func newKafkaMetrics() kafkaMetrics {
	return kafkaMetrics{
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "hookinbox_kafka_lag",
			Help: "Messages of a Kafka source's partition not yet recorded in the inbox and committed, as of its last committed batch.",
		}, []string{"source", "topic", "partition"}),
		read: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hookinbox_kafka_messages_total",
			Help: "Messages a Kafka source recorded in the inbox (new or duplicate) and committed.",
		}, []string{"source", "topic"}),
	}
}

// ObserveKafkaBatch records one committed batch's messages of a partition
// and the partition's lag after it.
func (m *Metrics) ObserveKafkaBatch(source, topic string, partition int32, messages int, lag int64) {
	m.kafka.read.WithLabelValues(source, topic).Add(float64(messages))
	m.kafka.lag.WithLabelValues(source, topic, strconv.Itoa(int(partition))).Set(float64(lag))
}
