package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// adminClient calls the admin API of a running serve. Its reference is
// the API's OpenAPI document (`hookinbox openapi`, internal/admin/
// openapi.yaml): the tests hold every request it sends and every answer
// it reads to that document.
type adminClient struct {
	base  string
	token string
	http  *http.Client
}

// adminFlags registers the flags every admin command shares.
func adminFlags(fs *flag.FlagSet, e env) {
	configFlag(fs, e)
	fs.String("admin-url", "", "admin API base URL (env HOOKINBOX_ADMIN_URL; default: from admin.listen in the config)")
	fs.String("admin-token", "", "admin token (env HOOKINBOX_ADMIN_TOKEN; default: admin.token in the config)")
}

// newAdminClient needs only the admin URL and token: from the flags, else
// the environment, else the config file, which is read only if it exists
// or was named, so the binary works from any directory.
func newAdminClient(fs *flag.FlagSet, e env) (*adminClient, error) {
	base, token := fs.Lookup("admin-url").Value.String(), fs.Lookup("admin-token").Value.String()
	if v, ok := e.lookup("HOOKINBOX_ADMIN_URL"); ok && base == "" {
		base = v
	}
	if v, ok := e.lookup("HOOKINBOX_ADMIN_TOKEN"); ok && token == "" {
		token = v
	}
	if base == "" || token == "" {
		cfg, err := loadOptionalConfig(fs, e)
		if err != nil {
			return nil, err
		}
		if base == "" {
			base = listenURL(cfg.Admin.Listen)
		}
		if token == "" {
			token = cfg.Admin.Token
		}
	}
	return &adminClient{base: strings.TrimSuffix(base, "/"), token: token, http: &http.Client{Timeout: 60 * time.Second, Transport: e.adminTransport}}, nil
}

// call sends one request. A POST carries an Idempotency-Key and is retried
// with it on connection errors and 503s, so a retry never replays twice.
func (a *adminClient) call(ctx context.Context, method, path string, body any, key string) (int, []byte, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return 0, nil, err
		}
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			sleepCtx(ctx, time.Duration(attempt)*time.Second)
		}
		req, err := http.NewRequestWithContext(ctx, method, a.base+path, bytes.NewReader(payload))
		if err != nil {
			return 0, nil, err
		}
		if a.token != "" {
			req.Header.Set("Authorization", "Bearer "+a.token)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := a.http.Do(req)
		if err != nil && ctx.Err() != nil {
			return 0, nil, err // given up on: not a reason to ask again
		}
		if err != nil {
			lastErr = fmt.Errorf("%w\n(is hookinbox serve running there? --admin-url or HOOKINBOX_ADMIN_URL names its admin listener)", err)
			if method == http.MethodPost && key == "" {
				break // not safe to repeat without a key
			}
			continue
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return 0, nil, err
		}
		if resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusConflict && key != "" {
			lastErr = fmt.Errorf("%s %s: %s %s", method, path, resp.Status, bytes.TrimSpace(raw))
			continue
		}
		if resp.StatusCode >= 300 {
			return resp.StatusCode, raw, fmt.Errorf("%s %s: %s %s", method, path, resp.Status, bytes.TrimSpace(raw))
		}
		return resp.StatusCode, raw, nil
	}
	return 0, nil, lastErr
}

func newIdempotencyKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "cli-" + hex.EncodeToString(b)
}

// deliveriesCmd lists deliveries, or shows one: `hookinbox deliveries [ID]`.
func deliveriesCmd(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("deliveries", e)
	adminFlags(fs, e)
	q := url.Values{}
	filters := map[string]*string{}
	for _, name := range []string{"source", "status", "event-type", "resource", "since", "until", "limit", "cursor"} {
		filters[name] = fs.String(name, "", "filter: "+name)
	}
	filters["send-status"] = fs.String("send-status", "", "filter: failed lists the deliveries with a failed send")
	filters["destination"] = fs.String("destination", "", "with --send-status: the failed sends to this destination")
	asJSON := fs.Bool("json", false, "print the API's JSON")
	id, client, err := parseAdminCommand(fs, args, e)
	if err != nil {
		return err
	}
	if id != "" {
		_, raw, err := client.call(ctx, http.MethodGet, "/admin/deliveries/"+id, nil, "")
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(e, raw)
		}
		return printDelivery(e.stdout, raw)
	}
	for name, v := range filters {
		if *v != "" {
			q.Set(strings.ReplaceAll(name, "-", "_"), *v)
		}
	}
	list := "/admin/deliveries"
	if len(q) > 0 {
		list += "?" + q.Encode()
	}
	_, raw, err := client.call(ctx, http.MethodGet, list, nil, "")
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e, raw)
	}
	var page struct {
		Items []struct {
			ID         int64     `json:"id"`
			Source     string    `json:"source"`
			DeliveryID string    `json:"delivery_id"`
			EventType  string    `json:"event_type"`
			Status     string    `json:"status"`
			ReceivedAt time.Time `json:"received_at"`
			LastError  *string   `json:"last_error"`
			Failed     []struct {
				Destination string  `json:"destination"`
				Error       *string `json:"error"`
			} `json:"failed_sends"`
		} `json:"items"`
		NextCursor *string `json:"next_cursor"`
	}
	if err := json.Unmarshal(raw, &page); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tRECEIVED\tSOURCE\tEVENT\tSTATUS\tDELIVERY ID\tLAST ERROR")
	for _, d := range page.Items {
		status, lastErr := d.Status, ""
		if d.LastError != nil {
			lastErr, _, _ = strings.Cut(*d.LastError, "\n")
		}
		// A delivery processed may have a send that failed: it is marked
		// in STATUS, and the first such send's error follows its own.
		if len(d.Failed) > 0 {
			status += ", send failed"
			f := d.Failed[0]
			sendErr := "send to " + f.Destination + " failed"
			if f.Error != nil {
				first, _, _ := strings.Cut(*f.Error, "\n")
				sendErr += ": " + first
			}
			if len(d.Failed) > 1 {
				sendErr += fmt.Sprintf(" (and %d more)", len(d.Failed)-1)
			}
			lastErr = strings.TrimPrefix(lastErr+"; "+sendErr, "; ")
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", d.ID, localTime(&d.ReceivedAt),
			printable(d.Source), printable(d.EventType), printable(status), printable(d.DeliveryID), printable(lastErr))
	}
	tw.Flush()
	if page.NextCursor != nil {
		fmt.Fprintf(e.stdout, "more: hookinbox deliveries --cursor %s\n", printable(*page.NextCursor))
	}
	return nil
}

// replayCmd replays one delivery (`hookinbox replay ID`) or, given a
// filter, starts a bulk replay and follows its progress.
func replayCmd(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("replay", e)
	adminFlags(fs, e)
	source := fs.String("source", "", "bulk: only this source")
	status := fs.String("status", "", "bulk: only deliveries with this status (e.g. failed)")
	eventType := fs.String("event-type", "", "bulk: only this event type")
	since := fs.String("since", "", "bulk: received at or after (RFC 3339)")
	until := fs.String("until", "", "bulk: received before (RFC 3339)")
	limit := fs.Int("limit", 0, "bulk: at most this many (default 1000)")
	key := fs.String("key", "", "Idempotency-Key (default: a fresh one; reuse one to make a repeated command a no-op)")
	wait := fs.Bool("wait", true, "bulk: wait until every replay has run")
	asJSON := fs.Bool("json", false, "print the API's JSON")
	id, client, err := parseAdminCommand(fs, args, e)
	if err != nil {
		return err
	}
	if *key == "" {
		*key = newIdempotencyKey()
	}
	if id != "" {
		_, raw, err := client.call(ctx, http.MethodPost, "/admin/deliveries/"+id+"/replay", nil, *key)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(e, raw)
		}
		return printReplay(e, raw)
	}
	if *source == "" && *status == "" && *eventType == "" && *since == "" && *until == "" {
		return errors.New("give a delivery id, or a filter (--status failed, --source, --event-type, --since, --until) for a bulk replay")
	}
	// The filters given, as createBulkReplay's body names them: an empty
	// one is left out rather than sent as "" (the API takes "" for absent,
	// its document names no such value).
	filter := map[string]any{}
	for k, v := range map[string]string{"source": *source, "status": *status, "event_type": *eventType, "since": *since, "until": *until} {
		if v != "" {
			filter[k] = v
		}
	}
	if *limit != 0 {
		filter["limit"] = *limit
	}
	_, raw, err := client.call(ctx, http.MethodPost, "/admin/bulk-replays", filter, *key)
	if err != nil {
		return err
	}
	var progress struct {
		ID       int64  `json:"bulk_replay_id"`
		State    string `json:"state"`
		Matched  int    `json:"matched"`
		Enqueued int    `json:"enqueued"`
		Done     int    `json:"done"`
	}
	for {
		if err := json.Unmarshal(raw, &progress); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "bulk replay %d: %s, matched %d, enqueued %d, done %d\n",
			progress.ID, printable(progress.State), progress.Matched, progress.Enqueued, progress.Done)
		if !*wait || progress.State == "finished" && progress.Done >= progress.Enqueued {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
		if _, raw, err = client.call(ctx, http.MethodGet, "/admin/bulk-replays/"+strconv.FormatInt(progress.ID, 10), nil, ""); err != nil {
			return err
		}
	}
}

// printReplay says in a line which delivery a replay runs again, and its
// job.
func printReplay(e env, raw []byte) error {
	var r struct {
		ReplayID   int64  `json:"replay_id"`
		ID         int64  `json:"id"`
		Source     string `json:"source"`
		DeliveryID string `json:"delivery_id"`
		JobID      int64  `json:"job_id"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "replay %d: delivery %d (%s %s) queued as job %d\n",
		r.ReplayID, r.ID, printable(r.Source), printable(r.DeliveryID), r.JobID)
	return nil
}

// parseAdminCommand parses an admin command's arguments, an optional
// leading id then flags (adminFlags among them), and builds its client.
func parseAdminCommand(fs *flag.FlagSet, args []string, e env) (string, *adminClient, error) {
	id, rest := leadingID(args)
	if id == "" {
		// The id may also follow the flags: replay --config F 42.
		if n := len(args); n > 0 {
			if tail, _ := leadingID(args[n-1:]); tail != "" && (n == 1 || !strings.HasPrefix(args[n-2], "-") || strings.Contains(args[n-2], "=") || isBoolFlag(fs, args[n-2])) {
				id, rest = tail, args[:n-1]
			}
		}
	}
	if err := parseFlags(fs, rest); err != nil {
		return "", nil, err
	}
	client, err := newAdminClient(fs, e)
	return id, client, err
}

// isBoolFlag reports whether arg ("-x" or "--x") names a boolean flag of
// fs, which takes no value after it.
func isBoolFlag(fs *flag.FlagSet, arg string) bool {
	f := fs.Lookup(strings.TrimLeft(arg, "-"))
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// leadingID splits a numeric first argument from the flags after it.
func leadingID(args []string) (string, []string) {
	if len(args) > 0 {
		if _, err := strconv.ParseInt(args[0], 10, 64); err == nil {
			return args[0], args[1:]
		}
	}
	return "", args
}

// printJSON prints the admin API's answer indented. The API's encoder
// writes DEL and C1 controls inside strings raw, so even JSON output goes
// through printableJSON, and stays JSON.
func printJSON(e env, raw []byte) error {
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		_, err = io.WriteString(e.stdout, printableText(string(raw)))
		return err
	}
	_, err := io.WriteString(e.stdout, printableJSON(out.String())+"\n")
	return err
}
