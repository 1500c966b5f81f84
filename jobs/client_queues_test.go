package jobs_test

import (
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/jobs"
)

// Only the deliveries queue polls at River's client-wide interval; every
// other queue, a Registry's own included, polls at the follow-up interval,
// which follows a FetchPollInterval that is set.
func TestFollowUpQueuesPollLessOften(t *testing.T) {
	t.Parallel()
	reg := handlers.NewRegistry(handlers.Config{})
	reg.AddQueue("mail", 7)
	for _, tt := range []struct {
		name         string
		cfg          jobs.ClientConfig
		wantFollowUp time.Duration
	}{
		{"defaults", jobs.ClientConfig{}, 5 * river.FetchPollIntervalDefault},
		{"poll interval set", jobs.ClientConfig{FetchPollInterval: 50 * time.Millisecond}, 250 * time.Millisecond},
		{"both set", jobs.ClientConfig{FetchPollInterval: 50 * time.Millisecond, FollowUpFetchPollInterval: 2 * time.Second}, 2 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := tt.cfg
			cfg.Registry = reg
			queues, err := jobs.QueueConfigs(cfg.WithDefaults())
			require.NoError(t, err)
			require.Len(t, queues, 4)
			require.Zero(t, queues[jobs.QueueDeliveries].FetchPollInterval, "deliveries take the client's interval")
			for _, name := range []string{handlers.QueueDownstream, river.QueueDefault, "mail"} {
				require.Equal(t, tt.wantFollowUp, queues[name].FetchPollInterval, name)
			}
			require.Equal(t, 7, queues["mail"].MaxWorkers)
		})
	}
}

// A Registry may not take a queue hookinbox runs itself.
func TestRegistryQueueMayNotShadowOurs(t *testing.T) {
	t.Parallel()
	reg := handlers.NewRegistry(handlers.Config{})
	reg.AddQueue(jobs.QueueDeliveries, 3)
	_, err := jobs.QueueConfigs(jobs.ClientConfig{Registry: reg}.WithDefaults())
	require.ErrorContains(t, err, `queue "deliveries" is hookinbox's own`)
}
