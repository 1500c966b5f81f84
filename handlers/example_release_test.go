package handlers

// This file is the README's "Write a handler" example, kept here so that it
// compiles with every change. It is not registered by hookinbox serve.

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/google/go-github/v60/github"
	"github.com/riverqueue/river"
)

// RegisterReleaseNotifier records each published GitHub release and posts
// a notice about it to a chat webhook, once.
func RegisterReleaseNotifier(r *Registry, chatURL string) error {
	AddWorker(r, &releaseNoticeWorker{url: chatURL, client: &http.Client{Timeout: DefaultDownstreamTimeout}})
	return r.Register(Registration{
		Name:     "github.release_notifier", // part of the derived keys: never rename
		Provider: "github",
		Events:   []string{"release"},
		Ordering: EveryEvent,
		Batch:    true,
		Handler:  HandlerFunc(notifyRelease),
	})
}

func notifyRelease(ctx context.Context, e *Event) error {
	ev, ok := e.GitHub.(*github.ReleaseEvent)
	if !ok || ev.GetAction() != "published" {
		return nil // other actions: nothing to do
	}
	repo, tag := ev.GetRepo().GetFullName(), ev.GetRelease().GetTagName()
	// 1. Local effect, in the delivery's transaction, on a natural key.
	if _, err := e.Tx.Exec(ctx,
		`INSERT INTO release_notice (repo, tag, delivery_id) VALUES ($1, $2, $3)
		 ON CONFLICT (repo, tag) DO NOTHING`, repo, tag, e.DeliveryID); err != nil {
		return err
	}
	// 2. The outside call goes to its own job, enqueued once, carrying a
	//    key derived from this delivery.
	_, err := e.EnqueueOnce(ctx, "notify", ReleaseNoticeArgs{
		Text: repo + " " + tag + " is out", Key: e.Key("notify"),
	}, nil)
	return err
}

type ReleaseNoticeArgs struct {
	Text string `json:"text"`
	Key  string `json:"key" river:"unique"`
}

func (ReleaseNoticeArgs) Kind() string { return "release_notice" }
func (ReleaseNoticeArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueDownstream, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

type releaseNoticeWorker struct {
	river.WorkerDefaults[ReleaseNoticeArgs]
	url    string
	client *http.Client
}

func (w *releaseNoticeWorker) Work(ctx context.Context, job *river.Job[ReleaseNoticeArgs]) error {
	body, _ := json.Marshal(map[string]string{"text": job.Args.Text})
	// JobResult retries 5xx/timeouts (same key), waits on 409/429/503,
	// cancels on other 4xx.
	_, err := Call{URL: w.url, Key: job.Args.Key, Body: body}.Post(ctx, w.client)
	return JobResult(job.JobRow, err)
}
