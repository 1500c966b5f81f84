// Command custom-binary is hookinbox with a handler of its own, as a team
// builds it in its own module: on each GitHub star it records the
// stargazer in its own table and thanks them in a chat, once.
//
//	go build -o myinbox ./examples/custom-binary
//	./myinbox serve --config myinbox.yaml
//
// with, in myinbox.yaml besides the usual sources:
//
//	app:
//	  chat_url: "https://chat.example.com/hooks/T0001"
package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/google/go-github/v60/github"
	"github.com/riverqueue/river"

	"github.com/hookinbox/hookinbox"
	"github.com/hookinbox/hookinbox/handlers"
)

//go:embed migrations/*.up.sql
var migrations embed.FS

func main() {
	hookinbox.Main(
		hookinbox.WithShippedHandlers(),
		hookinbox.WithMigrations(hookinbox.Sub(migrations, "migrations")),
		hookinbox.WithHandlers(registerStargazers),
	)
}

// appConfig is this binary's section of hookinbox.yaml.
type appConfig struct {
	ChatURL string `yaml:"chat_url"`
}

func registerStargazers(r *handlers.Registry, d hookinbox.Deps) error {
	var cfg appConfig
	if err := d.App.Decode(&cfg); err != nil {
		return err
	}
	if cfg.ChatURL == "" {
		return errors.New("app.chat_url is required")
	}
	return register(r, cfg.ChatURL, d.HTTPClient)
}

// register adds the handler and its worker; tests call it directly.
func register(r *handlers.Registry, chatURL string, client *http.Client) error {
	handlers.AddWorker(r, &thankWorker{client: client, url: chatURL})
	return r.Register(handlers.Registration{
		Name:     "acme.stargazers", // part of the derived keys: never rename
		Provider: "github",
		Events:   []string{"star"},
		Ordering: handlers.EveryEvent,
		Batch:    true, // database work only: the chat call is its own job
		Handler:  handlers.HandlerFunc(recordStar),
	})
}

func recordStar(ctx context.Context, e *handlers.Event) error {
	ev, ok := e.GitHub.(*github.StarEvent)
	if !ok || ev.GetAction() != "created" {
		return nil
	}
	repo, login := ev.GetRepo().GetFullName(), ev.GetSender().GetLogin()
	// The local effect, in the delivery's transaction, on its natural key.
	if _, err := e.Tx.Exec(ctx, `INSERT INTO stargazer (repo, login, delivery_id) VALUES ($1, $2, $3)
		ON CONFLICT (repo, login) DO NOTHING`, repo, login, e.DeliveryID); err != nil {
		return err
	}
	// The outside call: its own job, enqueued once for this delivery, with
	// a key derived from it (the same on every retry and replay).
	_, err := e.EnqueueOnce(ctx, "thank", ThankArgs{Text: "Thanks for starring " + repo + ", @" + login, Key: e.Key("thank")}, nil)
	return err
}

// ThankArgs is one chat message and its idempotency key.
type ThankArgs struct {
	Text string `json:"text"`
	Key  string `json:"key" river:"unique"`
}

func (ThankArgs) Kind() string { return "acme_thank" }
func (ThankArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: handlers.QueueDownstream, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

type thankWorker struct {
	river.WorkerDefaults[ThankArgs]
	client *http.Client
	url    string
}

func (w *thankWorker) Work(ctx context.Context, job *river.Job[ThankArgs]) error {
	body, _ := json.Marshal(map[string]string{"text": job.Args.Text})
	_, err := handlers.Call{URL: w.url, Key: job.Args.Key, Body: body}.Post(ctx, w.client)
	return handlers.JobResult(job.JobRow, err)
}
