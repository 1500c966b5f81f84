package cli

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hookinbox/hookinbox/internal/destination"
)

// headerFlags collects repeated --header K:V flags.
type headerFlags http.Header

func (h headerFlags) String() string { return "" }

func (h headerFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, ":")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("%q: want Name:value", v)
	}
	http.Header(h).Add(strings.TrimSpace(k), strings.TrimSpace(val))
	return nil
}

// routesCmd is `hookinbox routes test`: the routes of a config evaluated
// over one payload, as the outbox and the senders evaluate them, without
// sending or storing anything.
func routesCmd(args []string, e env) error {
	if len(args) == 0 || args[0] != "test" {
		fmt.Fprint(e.stderr, "usage: hookinbox routes test --source NAME [--event TYPE] [--file PAYLOAD] [--header K:V]...\n")
		return errUsage
	}
	fs := newFlagSet("routes test", e)
	configPath := configFlag(fs, e)
	sourceName := fs.String("source", "", "source name from the config (required)")
	event := fs.String("event", "", "event type; picks a built-in sample when --file is not given")
	file := fs.String("file", "", "payload file instead of a sample")
	deliveryID := fs.String("delivery-id", "routes-test", "the delivery id expressions see")
	resource := fs.String("resource", "", "the resource key expressions see")
	header := headerFlags{}
	fs.Var(header, "header", "a request header the expressions see, Name:value (repeatable)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	cfg, src, err := loadSource(*configPath, *sourceName, e)
	if err != nil {
		return err
	}
	body, err := payload(src.Provider, *event, *file)
	if err != nil {
		return err
	}
	h := http.Header(header)
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	eventType := *event
	if eventType == "" {
		eventType = "*"
	}
	_, routes := destinationsAndRoutes(cfg)
	results, err := destination.Evaluate(routes, sourceNames(cfg), destination.ExprInput{Source: src.Name, EventType: eventType,
		DeliveryID: *deliveryID, ReceivedAt: time.Now(), Resource: *resource, Header: h, Body: body,
		ContentType: h.Get("Content-Type")})
	if err != nil {
		return err
	}
	return printRouteResults(e.stdout, src.Name, eventType, results)
}

// printRouteResults prints what each destination would get; an error if a
// route failed to evaluate.
func printRouteResults(w io.Writer, source, eventType string, results []destination.RouteResult) error {
	if len(results) == 0 {
		fmt.Fprintf(w, "no route sends %s %s events anywhere\n", printable(source), printable(eventType))
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	failed := 0
	for _, r := range results {
		switch {
		case r.Err != nil:
			failed++
			fmt.Fprintf(tw, "%s\troute %d\tERROR\t%s\n", printable(r.Destination), r.Route, printableText(r.Err.Error()))
		case !r.Sends:
			fmt.Fprintf(tw, "%s\t-\tfiltered out\tevery route's filter refused it\n", printable(r.Destination))
		default:
			fmt.Fprintf(tw, "%s\troute %d\tsends\t%s, %d bytes\n", printable(r.Destination), r.Route, printable(r.ContentType), len(r.Body))
			fmt.Fprintf(tw, "\t\t\t%s\n", printableText(string(r.Body)))
		}
	}
	tw.Flush()
	if failed > 0 {
		return fmt.Errorf("%d route(s) failed to evaluate: serve would record those sends failed", failed)
	}
	return nil
}
