// Package releasenotice records each published GitHub release and posts a
// notice about it to a chat webhook, once. It is docs/handlers.md's
// "Write a handler" example: a handler in a package of its own, as a user
// writes one, using only hookinbox's exported API.
package releasenotice

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/google/go-github/v60/github"
	"github.com/riverqueue/river"

	"github.com/hookinbox/hookinbox/handlers"
)

// Register adds the handler and its follow-up worker to r.
func Register(r *handlers.Registry, chatURL string) error {
	handlers.AddWorker(r, &noticeWorker{url: chatURL, client: &http.Client{Timeout: handlers.DefaultDownstreamTimeout}})
	return r.Register(handlers.Registration{
		Name:     "github.release_notifier", // part of the derived keys: never rename
		Provider: "github",                  // or Source: "github" for one source
		Events:   []string{"release"},       // or handlers.AnyEvent
		Ordering: handlers.EveryEvent,       // or LatestState: stale events are passed over
		Batch:    true,                      // database work only, so it may share a transaction
		Handler:  handlers.HandlerFunc(notify),
	})
}

func notify(ctx context.Context, e *handlers.Event) error {
	ev, ok := e.GitHub.(*github.ReleaseEvent) // go-github's typed event
	if !ok || ev.GetAction() != "published" {
		return nil
	}
	repo, tag := ev.GetRepo().GetFullName(), ev.GetRelease().GetTagName()
	// 1. Local effect, in the delivery's transaction, on a natural key.
	if _, err := e.Tx.Exec(ctx,
		`INSERT INTO release_notice (repo, tag, delivery_id) VALUES ($1, $2, $3)
		 ON CONFLICT (repo, tag) DO NOTHING`, repo, tag, e.DeliveryID); err != nil {
		return err
	}
	// 2. The outside call goes to its own job, enqueued once per release.
	//    Its key belongs to the release, not to this delivery: GitHub may
	//    send the same release again with a new delivery id.
	key := e.KeyFor("notify", repo, tag)
	_, err := e.EnqueueOnceForKey(ctx, key, "notify", NoticeArgs{
		Text: repo + " " + tag + " is out", Key: key,
	}, nil)
	return err
}

// NoticeArgs is the follow-up job: one chat message, with its key.
type NoticeArgs struct {
	Text string `json:"text"`
	Key  string `json:"key" river:"unique"`
}

func (NoticeArgs) Kind() string { return "release_notice" }
func (NoticeArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: handlers.QueueDownstream, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

type noticeWorker struct {
	river.WorkerDefaults[NoticeArgs]
	url    string
	client *http.Client
}

func (w *noticeWorker) Work(ctx context.Context, job *river.Job[NoticeArgs]) error {
	body, _ := json.Marshal(map[string]string{"text": job.Args.Text})
	_, err := handlers.Call{URL: w.url, Key: job.Args.Key, Body: body}.Post(ctx, w.client)
	// Retry 5xx and timeouts with the same key, wait on 409/429/503,
	// cancel on other 4xx.
	return handlers.JobResult(job.JobRow, err)
}
