package metrics

import "github.com/prometheus/client_golang/prometheus"

// orphanLastJobs are the values of hookinbox_orphan_sweep_requeued_total's
// last_job label (jobs.OrphanSweepConfig.Observe), each shown from the
// start so that an alert on its increase has a series to watch.
var orphanLastJobs = []string{"discarded", "completed", "none"}

func newOrphansRequeued() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hookinbox_orphan_sweep_requeued_total",
		Help: "Deliveries the orphan sweep enqueued again because River had no job left to process them, " +
			"by the state of the last job it still had (discarded, completed: its follow-up is gone, none: every job is gone).",
	}, []string{"last_job"})
	for _, l := range orphanLastJobs {
		c.WithLabelValues(l)
	}
	return c
}

// ObserveOrphansRequeued records n deliveries the orphan sweep enqueued
// again, whose last job was lastJob.
func (m *Metrics) ObserveOrphansRequeued(lastJob string, n int) {
	m.orphansRequeued.WithLabelValues(lastJob).Add(float64(n))
}
