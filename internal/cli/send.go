package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/outbound"
	"github.com/hookinbox/hookinbox/verify"
)

// samples are realistic payloads per provider, named <provider>/<event>.json,
// the event percent-escaped where Go cannot embed it as a file name or it
// would name a directory (sampleFileName).
//
//go:embed samples
var samples embed.FS

// sampleIDStem is part of every id in a built-in sample that names what
// the event is about (Stripe's evt_, pi_ and ch_): --new-id renews them
// all, so the saga sees a new payment rather than one it already credited.
// In the presets' samples it is in the event's own id where the delivery
// id is read from the body (Slack's event_id, Paddle's event_id, …) or is
// the body's hash (Zoom, Lemon Squeezy), so --new-id is a new delivery
// there too.
const sampleIDStem = "3QxHookinboxSample01"

const sendUsage = `usage: hookinbox send --source NAME (--event TYPE | --file F) [flags]

Signs a payload with the source's first secret, as its provider would, and
POSTs it. Built-in samples are embedded in the binary; their source files
are internal/cli/samples/<provider>/<event>.json in the repository (a ":" or
"/" in <event> written %%3A or %%2F):
%s
The delivery id is derived from the payload, so sending the same payload
again is a provider's retry; --new-id makes a new delivery, and for a
built-in sample also a new payment (fresh Stripe event, payment intent and
charge ids).

`

func sendCmd(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("send", e)
	fs.Usage = func() { sendUsageText(fs) }
	configPath := configFlag(fs, e)
	sourceName := fs.String("source", "", "source name from the config (required)")
	event := fs.String("event", "", "event type; picks a built-in sample when --file is not given")
	file := fs.String("file", "", "payload file to send instead of a sample")
	target := fs.String("url", "", "URL to POST to (default: this config's listen address + /webhooks/<source>)")
	newID := fs.Bool("new-id", false, "a new delivery instead of a retry: fresh delivery id (and, for a built-in sample, fresh payment ids)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, src, err := loadSource(*configPath, *sourceName, e)
	if err != nil {
		return err
	}
	if src.Kafka != nil {
		return fmt.Errorf("source %q reads Kafka topic(s) %s: produce a message to them instead; send posts webhooks",
			src.Name, strings.Join(src.Kafka.Topics, ", "))
	}

	body, err := payload(src.Provider, *event, *file)
	if err != nil {
		return err
	}
	msg, body, err := message(src, *event, body, *file == "", *newID)
	if err != nil {
		return err
	}
	// After message, so the same payload keeps its delivery id.
	if body, err = stampBodyTime(src, body); err != nil {
		return err
	}
	tooLarge := fmt.Sprintf("the body is %d bytes, over max_body_bytes (%d) in %s", len(body), cfg.MaxBodyBytes, *configPath)
	if len(body) > cfg.MaxBodyBytes && *target == "" {
		// The service would answer 413 before reading the body and close
		// the connection, which the client may see only as a reset.
		return fmt.Errorf("%s: %s; the service would answer 413 and store nothing, so nothing was sent",
			ingest.CodePayloadTooLarge, tooLarge)
	}
	signer, err := verify.NewConfigSigner(src.VerifyConfig())
	if err != nil {
		return err
	}
	header, err := signer.Sign(body, msg, time.Now())
	if err != nil {
		return err
	}

	url := *target
	if url == "" {
		url = listenURL(cfg.Listen) + "/webhooks/" + src.Name
	}
	return post(ctx, e, src, url, msg, body, header, len(body) > cfg.MaxBodyBytes, tooLarge)
}

// post sends the signed request and prints the service's answer; an
// answer of 300 or more is an error.
func post(ctx context.Context, e env, src config.Source, url string, msg verify.Message, body []byte, header http.Header,
	overLimit bool, tooLarge string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = header
	// A redirect is an answer: following it would carry the signature
	// and a secret token header to whatever host the Location names.
	client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: outbound.CheckRedirect}
	resp, err := client.Do(req)
	if err != nil {
		if overLimit && (errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)) {
			// hookinbox answers an oversized body with 413 and closes at
			// once; the answer can be lost to the reset that follows.
			return fmt.Errorf("%w\n(the server closed the connection before reading the body, as hookinbox does with "+
				"413 %s: %s)", err, ingest.CodePayloadTooLarge, tooLarge)
		}
		return err
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "POST %s (delivery %s)\n%s\n%s\n", printable(url), printable(deliveryLabel(src.Provider, msg, body, respBody)),
		printable(resp.Status), printableText(string(bytes.TrimSpace(respBody))))
	if resp.StatusCode == http.StatusRequestEntityTooLarge {
		return fmt.Errorf("the service answered %s (%s)", resp.Status, tooLarge)
	}
	if resp.StatusCode >= 300 {
		return fmt.Errorf("the service answered %s", resp.Status)
	}
	return nil
}

// sendUsageText is send's -h: the usage, each provider's built-in
// samples, then the flags.
func sendUsageText(fs *flag.FlagSet) {
	var list strings.Builder
	providers, _ := samples.ReadDir("samples")
	for _, p := range providers {
		fmt.Fprintf(&list, "  %-12s %s\n", p.Name(), strings.Join(sampleEvents(p.Name()), ", "))
	}
	fmt.Fprintf(&list, "Other providers (hmac, discord, paypal, twilio, mailgun) send --file, signed as\ntheir sender signs (--event sets the event header where the provider sends one).\n")
	fmt.Fprintf(fs.Output(), sendUsage, list.String())
	fs.PrintDefaults()
}

// stampBodyTime sets the send time in the body where the sender stamps
// the time it sends into the body it signs (Linear's webhookTimestamp),
// which the verifier holds to the tolerance.
func stampBodyTime(src config.Source, body []byte) ([]byte, error) {
	field, unit := verify.BodyTimestamp(src.VerifyConfig())
	if field == "" {
		return body, nil
	}
	now := time.Now().Unix()
	if unit == "ms" {
		now = time.Now().UnixMilli()
	}
	return setJSONField(body, field, now)
}

// loadSource loads the config and finds the source a command names.
func loadSource(configPath, name string, e env) (config.Config, config.Source, error) {
	if name == "" {
		return config.Config{}, config.Source{}, errors.New("--source is required")
	}
	cfg, err := loadConfig(configPath, e)
	if err != nil {
		return cfg, config.Source{}, err
	}
	src, ok := cfg.Source(name)
	if !ok {
		return cfg, src, fmt.Errorf("no source %q in %s", name, configPath)
	}
	return cfg, src, nil
}

// payload returns the file's bytes or the built-in sample for the event.
func payload(provider, event, file string) ([]byte, error) {
	if file != "" {
		return os.ReadFile(file)
	}
	if event == "" {
		return nil, fmt.Errorf("--event or --file is required; samples for %s: %s", provider, strings.Join(sampleEvents(provider), ", "))
	}
	b, err := samples.ReadFile(path.Join("samples", provider, sampleFileName.Replace(event)+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no sample for %s event %q (have: %s); pass --file", provider, event, strings.Join(sampleEvents(provider), ", "))
	}
	return b, err
}

// sampleFileName escapes an event name into its sample's file name: Go
// cannot embed a ":" (Bitbucket's pullrequest:updated is
// pullrequest%3Aupdated.json), and a "/" would be a directory (Shopify's
// orders/updated is orders%2Fupdated.json).
var sampleFileName = strings.NewReplacer("%", "%25", "/", "%2F", ":", "%3A")

func sampleEvents(provider string) []string {
	entries, _ := samples.ReadDir(path.Join("samples", provider))
	var out []string
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".json")
		if event, err := url.PathUnescape(name); err == nil {
			name = event
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// message derives the delivery id. By default it is a hash of what is sent,
// so sending the same payload twice looks like a provider's retry; newID
// makes a fresh one, and renews a built-in sample's ids (sampleIDStem).
// Stripe carries its event id inside the body, so there the body itself
// changes.
func message(src config.Source, event string, body []byte, sample, newID bool) (verify.Message, []byte, error) {
	sum := sha256.Sum256([]byte(src.Name + "\x00" + event + "\x00" + string(body)))
	seed := sum[:16]
	if newID {
		seed = make([]byte, 16)
		if _, err := rand.Read(seed); err != nil {
			return verify.Message{}, nil, err
		}
	}
	renewed := newID && sample && bytes.Contains(body, []byte(sampleIDStem))
	if renewed {
		body = bytes.ReplaceAll(body, []byte(sampleIDStem), []byte(hex.EncodeToString(seed)[:len(sampleIDStem)]))
	}
	if newID && sample && !renewed && src.DedupBodies() {
		// The source takes the same body under a new id for a replay
		// (config.Source.BodyDedup), so a new sample event needs a body of
		// its own: a field no handler reads marks it.
		var err error
		if body, err = setJSONField(body, "hookinbox_sample_nonce", hex.EncodeToString(seed)[:16]); err != nil {
			return verify.Message{}, nil, err
		}
	}
	switch src.Provider {
	case verify.ProviderGitHub:
		if event == "" {
			return verify.Message{}, nil, errors.New("--event is required for GitHub (it is the X-GitHub-Event header)")
		}
		return verify.Message{ID: uuidString(seed), EventType: event}, body, nil
	case verify.ProviderStripe:
		if !newID || renewed {
			return verify.Message{EventType: event}, body, nil
		}
		body, err := setJSONField(body, "id", "evt_"+hex.EncodeToString(seed)[:24])
		return verify.Message{EventType: event}, body, err
	default:
		return verify.Message{ID: "msg_" + hex.EncodeToString(seed)[:26], EventType: event}, body, nil
	}
}

// uuidString formats 16 bytes as a version-4-shaped UUID, like GitHub's GUIDs.
func uuidString(b []byte) string {
	u := make([]byte, 16)
	copy(u, b)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// setJSONField replaces one top-level field, keeping the others as they were.
func setJSONField(body []byte, key string, value any) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, fmt.Errorf("payload is not a JSON object: %w", err)
	}
	v, _ := json.Marshal(value)
	obj[key] = v
	return json.MarshalIndent(obj, "", "  ")
}

// deliveryLabel names the delivery the way the service recorded it: as
// its answer says, else as the provider's scheme puts it.
func deliveryLabel(provider string, msg verify.Message, body, answer []byte) string {
	var ans struct {
		DeliveryID string `json:"delivery_id"`
	}
	if json.Unmarshal(answer, &ans) == nil && ans.DeliveryID != "" {
		return ans.DeliveryID
	}
	if provider != verify.ProviderStripe {
		return msg.ID
	}
	var evt struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &evt)
	return evt.ID
}

// listenURL turns a listen address into a URL a local client can reach.
func listenURL(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "http://" + listen
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}
