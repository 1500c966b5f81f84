package config

import (
	"time"

	"github.com/hookinbox/hookinbox/verify"
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
		c.Admin.IdempotencyTTL = Duration(24 * time.Hour)
	}
	if c.Admin.SignIn.Burst == 0 {
		c.Admin.SignIn.Burst = 10
	}
	if c.Admin.SignIn.Every == 0 {
		c.Admin.SignIn.Every = Duration(time.Second)
	}
	r := &c.Retention
	for d, def := range map[*Duration]time.Duration{
		&r.Inbox: 30 * 24 * time.Hour, &r.IdempotencyKeys: 7 * 24 * time.Hour,
		&r.RiverCompleted: 24 * time.Hour, &r.RiverCancelled: 7 * 24 * time.Hour, &r.RiverDiscarded: 7 * 24 * time.Hour,
		&r.Every: time.Hour, &r.Pause: 100 * time.Millisecond,
	} {
		if *d == 0 {
			*d = Duration(def)
		}
	}
	if r.BatchSize == 0 {
		r.BatchSize = 5000
	}
	if c.Jobs.MaxWorkers == 0 {
		c.Jobs.MaxWorkers = 100
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
		c.Jobs.BatchSize = 200
	}
	if c.Jobs.BatchWindow == 0 {
		c.Jobs.BatchWindow = Duration(time.Millisecond)
	}
	if c.Jobs.Timeout == 0 {
		c.Jobs.Timeout = Duration(time.Minute)
	}
	if c.Jobs.RescueStuckAfter == 0 {
		c.Jobs.RescueStuckAfter = Duration(2 * time.Minute)
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
