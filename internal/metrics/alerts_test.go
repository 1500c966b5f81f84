package metrics

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/testdb"
)

// deploy/prometheus's alerting rules name only metrics hookinbox exports,
// so none silently watches a series that never exists.
func TestAlertingRulesNameExportedMetrics(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "..", "deploy", "prometheus", "hookinbox-alerts.yaml"))
	require.NoError(t, err)
	var file struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &file))

	pool := testdb.New(t)
	m := New(pool, nil)
	svc, err := destination.Register(handlers.NewRegistry(handlers.Config{}), destination.Config{
		Destinations: []config.Destination{{Name: "d", URL: "http://127.0.0.1:1/"}}, Pool: pool})
	require.NoError(t, err)
	m.WatchDestinations(svc)
	m.ObserveKafkaBatch("s", "t", 0, 1) // vectors appear once used
	m.ObserveKafkaLag("s", "t", 0, 0)
	m.ObserveDestination("d", "succeeded", 0)
	m.ObserveDelivery("e", "processed", 0)
	m.ObserveIngest("s", "accepted", 0)
	exported := scrape(t, m)
	name := regexp.MustCompile(`hookinbox_[a-z_]+`)
	rules := 0
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			rules++
			require.NotEmpty(t, r.Alert)
			for _, n := range name.FindAllString(r.Expr, -1) {
				require.Contains(t, exported, "# TYPE "+n+" ", "%s watches %s, which hookinbox does not export", r.Alert, n)
			}
		}
	}
	require.GreaterOrEqual(t, rules, 6)
}
