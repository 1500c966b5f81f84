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

	// The webhook listener's connection limits: room for a busy sender's
	// connections from one address (the benchmark's 96 among them), and a
	// whole listener's bound that still leaves other clients room beside
	// one at its limit.
	DefaultIngestMaxConnections           = 1024
	DefaultIngestMaxConnectionsPerAddress = 128
	// DefaultIngestBatchMax bounds one ingest batch.
	DefaultIngestBatchMax = 100

	// The admin listener's connection limits: an operator's browser and
	// scripts, far fewer than the webhook listener's senders.
	DefaultAdminMaxConnections           = 256
	DefaultAdminMaxConnectionsPerAddress = 64
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
	c.Admin = c.Admin.WithDefaults()
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
	c.Jobs = c.Jobs.WithDefaults()
	c.Ingest = c.Ingest.WithDefaults()
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

// WithDefaults fills the admin block's unset fields. The admin server
// (internal/admin) calls it too, so a program that builds its Config
// without a file runs with the same values.
func (a Admin) WithDefaults() Admin {
	if a.Listen == "" {
		a.Listen = DefaultAdminListen
	}
	if a.IdempotencyTTL == 0 {
		a.IdempotencyTTL = Duration(DefaultAdminIdempotencyTTL)
	}
	if a.MaxConnections == 0 {
		a.MaxConnections = DefaultAdminMaxConnections
	}
	if a.MaxConnectionsPerAddress == 0 {
		a.MaxConnectionsPerAddress = DefaultAdminMaxConnectionsPerAddress
	}
	if a.SignIn.Burst == 0 {
		a.SignIn.Burst = DefaultSignInBurst
	}
	if a.SignIn.Every == 0 {
		a.SignIn.Every = Duration(DefaultSignInEvery)
	}
	return a
}

// WithDefaults fills the jobs block's unset fields; jobs.NewClient calls
// it too.
func (j Jobs) WithDefaults() Jobs {
	if j.MaxWorkers == 0 {
		j.MaxWorkers = DefaultJobsMaxWorkers
	}
	if j.BatchSize == 0 {
		j.BatchSize = DefaultJobsBatchSize
	}
	if j.BatchWindow == 0 {
		j.BatchWindow = Duration(DefaultJobsBatchWindow)
	}
	if j.Timeout == 0 {
		j.Timeout = Duration(DefaultJobsTimeout)
	}
	if j.RescueStuckAfter == 0 {
		j.RescueStuckAfter = Duration(DefaultJobsRescueStuckAfter)
	}
	if j.OrphanGrace == 0 {
		j.OrphanGrace = Duration(DefaultOrphanGrace)
	}
	return j
}

// WithDefaults fills the ingest block's unset fields; ingest.NewServer
// calls it too.
func (i Ingest) WithDefaults() Ingest {
	if i.JobPerBatch == nil {
		on := true
		i.JobPerBatch = &on
	}
	if i.BatchWindow == nil {
		w := DefaultIngestBatchWindow
		i.BatchWindow = &w
	}
	if i.BatchMax == 0 {
		i.BatchMax = DefaultIngestBatchMax
	}
	if i.MaxConnections == 0 {
		i.MaxConnections = DefaultIngestMaxConnections
	}
	if i.MaxConnectionsPerAddress == 0 {
		i.MaxConnectionsPerAddress = DefaultIngestMaxConnectionsPerAddress
	}
	return i
}
