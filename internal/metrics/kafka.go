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
			Help: "Messages of a Kafka source's partition not yet recorded in the inbox and committed: the broker's high watermark less the group's committed offset, read every 15s whether batches flow or not.",
		}, []string{"source", "topic", "partition"}),
		read: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hookinbox_kafka_messages_total",
			Help: "Messages a Kafka source recorded in the inbox (new or duplicate) and committed.",
		}, []string{"source", "topic"}),
	}
}

// ObserveKafkaBatch records one committed batch's messages of a partition.
func (m *Metrics) ObserveKafkaBatch(source, topic string, partition int32, messages int) {
	m.kafka.read.WithLabelValues(source, topic).Add(float64(messages))
}

// ObserveKafkaLag records a partition's lag as its broker sees it.
func (m *Metrics) ObserveKafkaLag(source, topic string, partition int32, lag int64) {
	m.kafka.lag.WithLabelValues(source, topic, strconv.Itoa(int(partition))).Set(float64(lag))
}
