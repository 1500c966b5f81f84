package metrics

import "github.com/prometheus/client_golang/prometheus"

// deferralOutcomes are the values of hookinbox_processing_deferrals_total's
// outcome label (jobs.GenerationConfig.Observe), each shown from the start
// so that an alert on its increase has a series to watch.
var deferralOutcomes = []string{"deferred", "processed_outdated"}

func newDeferrals() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hookinbox_processing_deferrals_total",
		Help: "Processing jobs a worker of an older configuration left to a newer one (deferred), and those no newer " +
			"process took after jobs.MaxDeferrals looks, processed under the older configuration all the same (processed_outdated).",
	}, []string{"outcome"})
	for _, o := range deferralOutcomes {
		c.WithLabelValues(o)
	}
	return c
}

// ObserveDeferral records one processing job an outdated worker deferred,
// or processed all the same.
func (m *Metrics) ObserveDeferral(outcome string) { m.deferrals.WithLabelValues(outcome).Inc() }
