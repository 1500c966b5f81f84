package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hookinbox/hookinbox/internal/destination"
)

var (
	destinationPendingDesc = prometheus.NewDesc("hookinbox_destination_pending",
		"Sends to a destination not yet finished (waiting their turn, queued, or retrying).", []string{"destination"}, nil)
	destinationOpenDesc = prometheus.NewDesc("hookinbox_destination_circuit_open",
		"1 while a destination's circuit breaker is open (only probes are sent), else 0.", []string{"destination"}, nil)
	destinationPausedDesc = prometheus.NewDesc("hookinbox_destination_paused",
		"1 while an operator has paused a destination, else 0.", []string{"destination"}, nil)
	destinationUnknownDesc = prometheus.NewDesc("hookinbox_destination_unknown",
		"1 while a destination with unfinished sends is configured on no running process (its sends wait for one, or for an operator), else 0.",
		[]string{"destination"}, nil)
)

// ObserveDestination records one request to a destination: its outcome
// (succeeded, retry, failed) and how long it took.
func (m *Metrics) ObserveDestination(name, outcome string, d time.Duration) {
	m.destinationAttempts.WithLabelValues(name, outcome).Inc()
	if outcome != "route_error" { // decided before any request
		m.destinationDuration.WithLabelValues(name).Observe(d.Seconds())
	}
}

// WatchDestinations adds the destinations' gauges, read at scrape time.
func (m *Metrics) WatchDestinations(s *destination.Service) {
	m.registry.MustRegister(&destinationCollector{svc: s, m: m})
}

type destinationCollector struct {
	svc *destination.Service
	m   *Metrics
}

func (c *destinationCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- destinationPendingDesc
	ch <- destinationOpenDesc
	ch <- destinationPausedDesc
	ch <- destinationUnknownDesc
}

func (c *destinationCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sts, err := c.svc.Statuses(ctx)
	if err != nil {
		c.m.logger.Warn("metrics: reading destinations", "error", err)
		return
	}
	for _, st := range sts {
		ch <- prometheus.MustNewConstMetric(destinationPendingDesc, prometheus.GaugeValue, float64(st.Pending), st.Name)
		ch <- prometheus.MustNewConstMetric(destinationOpenDesc, prometheus.GaugeValue, boolValue(st.State == "open"), st.Name)
		ch <- prometheus.MustNewConstMetric(destinationPausedDesc, prometheus.GaugeValue, boolValue(st.State == "paused"), st.Name)
		ch <- prometheus.MustNewConstMetric(destinationUnknownDesc, prometheus.GaugeValue, boolValue(st.State == destination.StateUnknown), st.Name)
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
