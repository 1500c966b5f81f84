// Package metrics exposes hookinbox's Prometheus metrics. Request and
// handler metrics are observed as they happen; database gauges (inbox rows
// by status, queue depth, table sizes, oldest rows) are read at scrape time.
package metrics

import (
	"context"
	_ "embed"
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/riverdb"
)

// tablesSQL reads the size and oldest row of the inbox, admin's
// api_idempotency and River's jobs in one statement: it stays here, not
// with one of their owners (internal/inbox and internal/riverdb list it
// as outside).
//
//go:embed sql/tables.sql
var tablesSQL string

// UnknownSource labels requests for a source that is not configured: the
// name comes from the request, and a label per made-up name would let
// anyone grow our metrics without bound.
const UnknownSource = "_unknown"

// Metrics holds hookinbox's collectors on a registry of their own.
type Metrics struct {
	registry        *prometheus.Registry
	deliveries      *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec
	handlerRuns     *prometheus.CounterVec
	handlerDuration *prometheus.HistogramVec
	batchSize       *prometheus.HistogramVec
	orphansRequeued *prometheus.CounterVec
	deferrals       *prometheus.CounterVec
	kafka           kafkaMetrics

	destinationAttempts *prometheus.CounterVec
	destinationDuration *prometheus.HistogramVec
	logger              *slog.Logger
}

// New builds the metrics; pool feeds the scrape-time database gauges.
func New(pool *pgxpool.Pool, logger *slog.Logger) *Metrics {
	return newMetrics(pool, logger, ExactInboxRowsLimit)
}

func newMetrics(pool *pgxpool.Pool, logger *slog.Logger, exactLimit int64) *Metrics {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hookinbox_deliveries_total",
			Help: "Webhook requests by source and outcome (accepted, duplicate, handshake, conflict, invalid_signature, ...).",
		}, []string{"source", "outcome"}),
		requestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "hookinbox_ingest_request_duration_seconds",
			Help:    "Time to answer a webhook request, verification and the inbox transaction included.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"source", "outcome"}),
		handlerRuns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hookinbox_handler_runs_total",
			Help: "Delivery processing attempts by event type and outcome (processed, skipped, retry, failed).",
		}, []string{"event_type", "outcome"}),
		handlerDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "hookinbox_handler_duration_seconds",
			Help:    "Time to process a delivery (its handlers and the commit), by event type.",
			Buckets: prometheus.DefBuckets,
		}, []string{"event_type"}),
		batchSize: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "hookinbox_batch_size",
			Help:    "Deliveries per shared transaction, by stage (ingest: ingest.batch_window; processing: jobs.batch_size).",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512},
		}, []string{"stage"}),
	}
	m.logger = logger
	m.orphansRequeued = newOrphansRequeued()
	m.deferrals = newDeferrals()
	m.kafka = newKafkaMetrics()
	m.destinationAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "hookinbox_destination_attempts_total",
		Help: "Requests to destinations by outcome (succeeded, retry, failed: failed for good), and sends whose route's filter or transform failed to evaluate (route_error).",
	}, []string{"destination", "outcome"})
	m.destinationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "hookinbox_destination_duration_seconds",
		Help:    "Time a destination took to answer a request (or to fail it).",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"destination"})
	m.registry.MustRegister(m.destinationAttempts, m.destinationDuration)
	m.registry.MustRegister(m.deliveries, m.requestDuration, m.handlerRuns, m.handlerDuration, m.batchSize, m.orphansRequeued, m.deferrals, m.kafka.lag, m.kafka.read,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&dbCollector{pool: pool, logger: logger, exactLimit: exactLimit})
	return m
}

// ObserveIngest records one webhook request.
func (m *Metrics) ObserveIngest(source, outcome string, d time.Duration) {
	m.deliveries.WithLabelValues(source, outcome).Inc()
	m.requestDuration.WithLabelValues(source, outcome).Observe(d.Seconds())
}

// ObserveDelivery records one processing attempt.
func (m *Metrics) ObserveDelivery(eventType, outcome string, d time.Duration) {
	m.handlerRuns.WithLabelValues(eventType, outcome).Inc()
	m.handlerDuration.WithLabelValues(eventType).Observe(d.Seconds())
}

// ObserveIngestBatch records the size of one ingest batch transaction.
func (m *Metrics) ObserveIngestBatch(n int) {
	m.batchSize.WithLabelValues("ingest").Observe(float64(n))
}

// ObserveProcessingBatch records the size of one processing batch.
func (m *Metrics) ObserveProcessingBatch(n int) {
	m.batchSize.WithLabelValues("processing").Observe(float64(n))
}

// Handler serves the metrics in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

var (
	inboxRowsDesc = prometheus.NewDesc("hookinbox_inbox_rows",
		"Inbox rows by status, every status (0 included); exact unless hookinbox_inbox_rows_estimated says otherwise.", []string{"status"}, nil)
	inboxRowsEstimatedDesc = prometheus.NewDesc("hookinbox_inbox_rows_estimated",
		"1 when hookinbox_inbox_rows for this status is the planner's estimate (processed, past ExactInboxRowsLimit rows), 0 when exact.", []string{"status"}, nil)
	oldestUnprocessedDesc = prometheus.NewDesc("hookinbox_oldest_unprocessed_delivery_age_seconds",
		"Age of the oldest delivery still waiting to be processed (0 when none).", nil, nil)
	riverJobsDesc = prometheus.NewDesc("hookinbox_river_jobs",
		"River jobs by queue and state.", []string{"queue", "state"}, nil)
	tableSizeDesc = prometheus.NewDesc("hookinbox_table_size_bytes",
		"pg_total_relation_size of the tables retention keeps in check.", []string{"table"}, nil)
	tableOldestDesc = prometheus.NewDesc("hookinbox_table_oldest_row_age_seconds",
		"Age of the oldest row of each table (0 when empty).", []string{"table"}, nil)
	scrapeErrorDesc = prometheus.NewDesc("hookinbox_db_scrape_error",
		"1 when the last scrape could not read the database gauges.", nil, nil)
)

// ExactInboxRowsLimit is how many processed rows a scrape counts exactly;
// past it, the count is estimated (a scrape must not scan a large inbox).
const ExactInboxRowsLimit = 100_000

// dbCollector reads the database gauges at scrape time, bounded so that a
// slow database cannot hang the scrape.
type dbCollector struct {
	pool       *pgxpool.Pool
	logger     *slog.Logger
	exactLimit int64 // ExactInboxRowsLimit
}

func (c *dbCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{inboxRowsDesc, inboxRowsEstimatedDesc, oldestUnprocessedDesc, riverJobsDesc, tableSizeDesc, tableOldestDesc, scrapeErrorDesc} {
		ch <- d
	}
}

func (c *dbCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	failed := 0.0
	if err := c.collect(ctx, ch); err != nil {
		c.logger.Warn("metrics: reading database gauges", "error", err)
		failed = 1
	}
	ch <- prometheus.MustNewConstMetric(scrapeErrorDesc, prometheus.GaugeValue, failed)
}

func (c *dbCollector) collect(ctx context.Context, ch chan<- prometheus.Metric) error {
	rows, err := inbox.CountByStatus(ctx, c.pool, c.exactLimit)
	if err != nil {
		return err
	}
	if err := eachRow(rows, func(labels []string, v float64, estimated float64) {
		ch <- prometheus.MustNewConstMetric(inboxRowsDesc, prometheus.GaugeValue, v, labels...)
		ch <- prometheus.MustNewConstMetric(inboxRowsEstimatedDesc, prometheus.GaugeValue, estimated, labels...)
	}, 1); err != nil {
		return err
	}

	age, err := inbox.OldestPendingSeconds(ctx, c.pool)
	if err != nil {
		return err
	}
	ch <- prometheus.MustNewConstMetric(oldestUnprocessedDesc, prometheus.GaugeValue, age)

	if rows, err = riverdb.JobCounts(ctx, c.pool); err != nil {
		return err
	}
	if err := eachRow(rows, func(labels []string, v float64, _ float64) {
		ch <- prometheus.MustNewConstMetric(riverJobsDesc, prometheus.GaugeValue, v, labels...)
	}, 2); err != nil {
		return err
	}

	if rows, err = c.pool.Query(ctx, tablesSQL); err != nil {
		return err
	}
	return eachRow(rows, func(labels []string, size, oldest float64) {
		ch <- prometheus.MustNewConstMetric(tableSizeDesc, prometheus.GaugeValue, size, labels...)
		ch <- prometheus.MustNewConstMetric(tableOldestDesc, prometheus.GaugeValue, oldest, labels...)
	}, 1)
}

// eachRow reads rows of nLabels text columns followed by one or two
// float columns.
func eachRow(rows pgx.Rows, fn func(labels []string, a, b float64), nLabels int) error {
	defer rows.Close()
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return err
		}
		labels := make([]string, nLabels)
		for i := range labels {
			labels[i], _ = vals[i].(string)
		}
		a, _ := vals[nLabels].(float64)
		var b float64
		if len(vals) > nLabels+1 {
			b, _ = vals[nLabels+1].(float64)
		}
		fn(labels, a, b)
	}
	return rows.Err()
}
