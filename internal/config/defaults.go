package config

import (
	"time"

	"github.com/hookinbox/hookinbox/verify"
)

// The defaults WithDefaults fills. Each is written here once: the
// subsystems that take these values (ingest, jobs, the admin server, the
// Kafka consumer, handlers' downstream client) fall back to the same
// constants when a program leaves a field zero, so a parsed Config shows
// every value serve runs with. Keys that config leaves zero have their one
// default in the subsystem, which the key's comment names.
const (
	DefaultListen          = ":8080"
	DefaultAdminListen     = "127.0.0.1:8081"
	DefaultMaxBodyBytes    = 5 << 20
	DefaultReadTimeout     = 10 * time.Second
	DefaultShutdownTimeout = 20 * time.Second

	// DefaultDownstreamTimeout bounds one call of the shipped handlers
	// (handlers.DefaultDownstreamTimeout is this constant).
	DefaultDownstreamTimeout = 10 * time.Second

	DefaultAdminIdempotencyTTL = 24 * time.Hour

	// DefaultSignInBurst and DefaultSignInEvery: a mistyped token or two
	// costs nothing, and a guesser gets one try a second per address.
	DefaultSignInBurst = 10
	DefaultSignInEvery = time.Second

	DefaultJobsMaxWorkers  = 100
	DefaultJobsBatchSize   = 200
	DefaultJobsBatchWindow = time.Millisecond
	DefaultJobsTimeout     = time.Minute

	// DefaultJobsRescueStuckAfter bounds how long a delivery whose process
	// was killed mid-job waits before another process picks it up. River's
	// own default is an hour.
	DefaultJobsRescueStuckAfter = 2 * time.Minute

	// DefaultOrphanGrace is jobs.orphan_grace's default: how long an
	// operator has to retry a discarded job in River UI before the orphan
	// sweep enqueues another.
	DefaultOrphanGrace = 5 * time.Minute

	DefaultRetentionBatchSize = 5000
	DefaultRetentionPause     = 100 * time.Millisecond
)

// WithDefaults fills every unset field with its documented default.
func (c Config) WithDefaults() Config {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.DataDir == "" {
		c.DataDir = ".hookinbox"
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	for i := range c.Routes {
		if c.Routes[i].MaxOutputBytes == 0 {
			c.Routes[i].MaxOutputBytes = c.MaxBodyBytes
		}
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = Duration(DefaultReadTimeout)
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = Duration(DefaultShutdownTimeout)
	}
	if c.Admin.Listen == "" {
		c.Admin.Listen = DefaultAdminListen
	}
	if c.Admin.IdempotencyTTL == 0 {
		c.Admin.IdempotencyTTL = Duration(DefaultAdminIdempotencyTTL)
	}
	if c.Admin.SignIn.Burst == 0 {
		c.Admin.SignIn.Burst = DefaultSignInBurst
	}
	if c.Admin.SignIn.Every == 0 {
		c.Admin.SignIn.Every = Duration(DefaultSignInEvery)
	}
	r := &c.Retention
	for d, def := range map[*Duration]time.Duration{
		&r.Inbox: 30 * 24 * time.Hour, &r.IdempotencyKeys: 7 * 24 * time.Hour,
		&r.RiverCompleted: 24 * time.Hour, &r.RiverCancelled: 7 * 24 * time.Hour, &r.RiverDiscarded: 7 * 24 * time.Hour,
		&r.Every: time.Hour, &r.Pause: DefaultRetentionPause,
	} {
		if *d == 0 {
			*d = Duration(def)
		}
	}
	if r.BatchSize == 0 {
		r.BatchSize = DefaultRetentionBatchSize
	}
	if c.Jobs.MaxWorkers == 0 {
		c.Jobs.MaxWorkers = DefaultJobsMaxWorkers
	}
	if c.Ingest.JobPerBatch == nil {
		on := true
		c.Ingest.JobPerBatch = &on
	}
	if c.Ingest.BatchWindow == nil {
		w := DefaultIngestBatchWindow
		c.Ingest.BatchWindow = &w
	}
	if c.Jobs.BatchSize == 0 {
		c.Jobs.BatchSize = DefaultJobsBatchSize
	}
	if c.Jobs.BatchWindow == 0 {
		c.Jobs.BatchWindow = Duration(DefaultJobsBatchWindow)
	}
	if c.Jobs.Timeout == 0 {
		c.Jobs.Timeout = Duration(DefaultJobsTimeout)
	}
	if c.Jobs.RescueStuckAfter == 0 {
		c.Jobs.RescueStuckAfter = Duration(DefaultJobsRescueStuckAfter)
	}
	if c.Jobs.OrphanGrace == 0 {
		c.Jobs.OrphanGrace = Duration(DefaultOrphanGrace)
	}
	if c.Log.Format == "" {
		c.Log.Format = "text"
	}
	if c.Log.Level == "" {
		c.Log.Level = "info"
	}
	if c.Log.DeliveriesPerSecond == nil {
		n := DefaultLogDeliveriesPerSecond
		c.Log.DeliveriesPerSecond = &n
	}
	if c.Downstream.Timeout == 0 {
		c.Downstream.Timeout = Duration(DefaultDownstreamTimeout)
	}
	c.Alerts.alertDefaults()
	for i := range c.Sources {
		s := &c.Sources[i]
		var kept []string
		for _, secret := range s.Secrets {
			if secret != "" {
				kept = append(kept, secret)
			}
		}
		s.Secrets = kept
		if s.Kafka != nil {
			s.kafkaDefaults()
		}
		if s.Tolerance == 0 {
			s.Tolerance = Duration(verify.DefaultTolerance)
		}
		if s.ResourceField == "" {
			s.ResourceField = verify.PresetResource(s.Provider)
		}
	}
	return c
}
