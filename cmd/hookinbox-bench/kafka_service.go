package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// kafkaServeConfig is every serve of the kafka scenario: one Kafka
// source reading the pre-filled topic (the event id and type from
// headers, from the topic's start), and one Kafka destination that every
// issues event of it is routed to, unordered and keyed by the issue, with
// no rate limit. Every process gets the same file, as a deployment's
// would; the role decides what each runs. The generated config of the
// other scenarios has a GitHub source this one does not want, so this
// scenario writes its own.
const kafkaServeConfig = `listen: "127.0.0.1:%d"
database_url: "${DATABASE_URL}"
data_dir: %q
sources:
  - name: %s
    kafka:
      brokers: [%q]
      topics: [%q]
      group: %s
      delivery_id: "header:event_id"
      event_type: "header:type"
      start: earliest
    resource_field: issue.node_id
destinations:
  - name: %s
    kafka:
      brokers: [%q]
      topic: "hookinbox.{source}"
      key: resource
    max_in_flight: %d
    rate_limit: 0
routes:
  - source: %s
    events: ["issues"]
    to: [%s]
admin:
  listen: "127.0.0.1:%d"
  pprof: true
ingest:
  job_per_batch: %t
jobs:
  batch_size: %d
`

// kafkaServe is how the scenario runs hookinbox: its config file, and
// the binary and database it runs on.
type kafkaServe struct {
	r         *rig
	cfgPath   string
	readyURL  string
	adminURL  string
	logPrefix string
}

// newKafkaServe writes the scenario's config, with broker as the Kafka
// source's and destination's seed broker.
func newKafkaServe(r *rig, broker string) (*kafkaServe, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	cfg := fmt.Sprintf(kafkaServeConfig, ports[0], filepath.Join(r.work, "data"),
		kafkaSource, broker, kafkaSourceTopic, kafkaGroup,
		kafkaDestName, broker, r.opts.destInFlight, kafkaSource, kafkaDestName,
		ports[1], r.opts.jobPerBatch, r.opts.processBatch)
	k := &kafkaServe{r: r, cfgPath: filepath.Join(r.work, "hookinbox-kafka.yaml"),
		readyURL: fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[0]), adminURL: fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
		logPrefix: filepath.Join(r.work, "hookinbox-kafka-")}
	return k, os.WriteFile(k.cfgPath, []byte(cfg), 0o600)
}

// migrate runs `hookinbox migrate`, so that no phase's serve spends its
// time (and the phase's CPU) creating the schema.
func (k *kafkaServe) migrate(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, k.r.bin, "migrate", "--config", k.cfgPath)
	cmd.Env = k.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("hookinbox migrate: %w\n%s", err, out)
	}
	return nil
}

func (k *kafkaServe) env() []string { return append(serviceEnv(), "DATABASE_URL="+k.r.svcURL) }

// start starts `hookinbox serve --role=role` and returns at once, before
// it is ready, so that a phase's CPU and time can start with the process:
// a Kafka source reads as soon as it has joined its group, before /readyz
// is polled. Its log is hookinbox-kafka-<role>.log in the work directory.
func (k *kafkaServe) start(role string) (*service, error) {
	logPath := k.logPrefix + role + ".log"
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(k.r.bin, "serve", "--config", k.cfgPath, "--role", role)
	cmd.Env = k.env()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &service{cmd: cmd, adminURL: k.adminURL, logPath: logPath, rss: newRSSSampler(cmd.Process.Pid), done: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		s.rss.stop()
		close(s.done)
	}()
	return s, nil
}

// ready waits for s's /readyz, and stops s if it does not come.
func (k *kafkaServe) ready(ctx context.Context, s *service) error {
	if err := s.waitReady(ctx, k.readyURL); err != nil {
		_ = s.stop()
		return err
	}
	return nil
}
