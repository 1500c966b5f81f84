// Package cli is hookinbox's command line: serve, migrate, send and the
// admin commands. The root package hookinbox runs it (Main, Run) with the
// handlers and migrations a binary adds; cmd/hookinbox is that binary with
// the shipped handlers.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/telemetry"
)

const usage = `usage: hookinbox <command> [flags]

commands:
  init      write a starter hookinbox.yaml with freshly generated secrets
  serve     migrate, then receive webhooks and process them
  migrate   apply database migrations and exit
  send      sign a sample (or your) payload as a provider would and POST it
  routes test --source NAME [--event TYPE] [--file PAYLOAD]
            show which destinations a payload's routes send it to, and what body
  deliveries [ID]
            list stored deliveries (filters: --source, --status, ...), or show one
  replay ID | replay --status failed [...]
            replay one delivery, or start a bulk replay and follow it
  listen --forward-to URL [--source NAME]... [--events LIST] [--from now|ID|TIME]
            forward new deliveries to your app, signed with a local secret
  healthcheck [--ready]
            probe a running serve (for container health checks)
  db-url    print the database URL, password included (psql "$(hookinbox db-url)")
  openapi   print the admin API's OpenAPI 3.1 document (JSON)
  stub-downstream
            a stand-in for the APIs the shipped handlers call, for trying them out

Run 'hookinbox <command> -h' for a command's flags.
`

// env is what a command may read from its surroundings, and what the
// binary was built with; tests pass their own.
type env struct {
	stdout, stderr io.Writer
	lookup         func(string) (string, bool)
	ext            Extensions
	// adminTransport carries the admin commands' requests (nil: Go's
	// default). Tests hold every request and answer to the admin API's
	// OpenAPI document through it (internal/admin/contract).
	adminTransport http.RoundTripper
}

// Main runs the command in os.Args with ext and exits with its code.
func Main(ext Extensions) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], env{stdout: os.Stdout, stderr: os.Stderr, lookup: os.LookupEnv, ext: ext})
	stop()
	os.Exit(code)
}

// run executes one command and returns the process exit code.
func run(ctx context.Context, args []string, e env) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "init":
		err = initCmd(args[1:], e)
	case "serve":
		err = serveCmd(ctx, args[1:], e)
	case "migrate":
		err = migrateCmd(ctx, args[1:], e)
	case "send":
		err = sendCmd(ctx, args[1:], e)
	case "routes":
		err = routesCmd(args[1:], e)
	case "deliveries":
		err = deliveriesCmd(ctx, args[1:], e)
	case "replay":
		err = replayCmd(ctx, args[1:], e)
	case "listen":
		err = listenCmd(ctx, args[1:], e)
	case "healthcheck":
		err = healthcheckCmd(ctx, args[1:], e)
	case "db-url":
		err = dbURLCmd(ctx, args[1:], e)
	case "openapi":
		err = openapiCmd(args[1:], e)
	case "stub-downstream":
		err = stubDownstreamCmd(ctx, args[1:], e)
	case "-h", "--help", "help":
		fmt.Fprint(e.stdout, usage)
		return 0
	default:
		fmt.Fprintf(e.stderr, "hookinbox: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	default:
		// An error may quote a server's answer (the admin API's, a
		// webhook endpoint's): escaped like any data from outside.
		fmt.Fprintf(e.stderr, "hookinbox %s: %s\n", args[0], printableText(err.Error()))
		return 1
	}
}

// errUsage marks a flag error the flag package already printed.
var errUsage = errors.New("usage")

func newFlagSet(name string, e env) *flag.FlagSet {
	fs := flag.NewFlagSet("hookinbox "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return errUsage
	}
	return nil
}

// configFlag registers --config, whose default comes from HOOKINBOX_CONFIG.
func configFlag(fs *flag.FlagSet, e env) *string {
	def := config.DefaultPath
	if v, ok := e.lookup("HOOKINBOX_CONFIG"); ok && v != "" {
		def = v
	}
	return fs.String("config", def, "config file (env HOOKINBOX_CONFIG)")
}

// loadOptionalConfig reads the config for commands that can do without
// one (admin clients, healthcheck, db-url). A missing file is fine unless
// --config or HOOKINBOX_CONFIG named it: the defaults and the environment
// stand in for it, so the built binary works from any directory. Only the
// addresses these commands read are checked (config.LoadClient): a
// source's secret set only in the server's environment stops serve, not
// them.
func loadOptionalConfig(flags *flag.FlagSet, e env) (config.Config, error) {
	path := flags.Lookup("config").Value.String()
	named := false
	flags.Visit(func(f *flag.Flag) { named = named || f.Name == "config" })
	if v, ok := e.lookup("HOOKINBOX_CONFIG"); ok && v != "" {
		named = true
	}
	if _, err := os.Stat(path); !named && errors.Is(err, fs.ErrNotExist) {
		cfg, err := config.Parse(nil, e.lookup)
		if err != nil {
			return config.Config{}, fmt.Errorf("no %s; from the environment: %w", path, err)
		}
		return cfg, nil
	}
	return config.LoadClient(path, e.lookup)
}

// loadConfig is config.Load then CheckConfig, naming the way out when the
// file is missing: a new binary (a library user's own) has no config
// beside it.
func loadConfig(path string, e env) (config.Config, error) {
	cfg, err := config.Load(path, e.lookup)
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) && pathErr.Path == path && errors.Is(err, fs.ErrNotExist) {
		return cfg, fmt.Errorf("%w — run \"%s init\" to write one", err, commandName())
	}
	if err != nil {
		return cfg, err
	}
	if err := CheckConfig(cfg); err != nil {
		return config.Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// newLogger is the logger of commands run before a config is read.
func newLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// configLogger is the logger the config asks for (log.format, log.level).
func configLogger(w io.Writer, c config.Log) *slog.Logger {
	opts := &slog.HandlerOptions{Level: config.LogLevels[c.Level]}
	if c.Format == "json" {
		return slog.New(telemetry.LogHandler(slog.NewJSONHandler(w, opts)))
	}
	return slog.New(telemetry.LogHandler(slog.NewTextHandler(w, opts)))
}
