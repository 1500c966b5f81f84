package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hookinbox/hookinbox/internal/admin"
)

// printDelivery prints one delivery for a person: a header block, the
// headers, the payload (indented when it is JSON), its processing
// attempts, the downstream keys its handlers derived and what each
// destination got. Every value in it came from a sender, a destination or
// the database, so each is printed through printable (or printableText).
func printDelivery(w io.Writer, raw []byte) error {
	var d admin.DeliveryDetail
	if err := json.Unmarshal(raw, &d); err != nil {
		return fmt.Errorf("reading the delivery: %w", err)
	}
	printDeliverySummary(w, &d)
	printDeliveryHeaders(w, &d)
	printDeliveryPayload(w, &d)
	printDeliveryAttempts(w, &d)
	printDeliveryKeys(w, &d)
	return printDeliverySends(w, &d)
}

func printDeliverySummary(w io.Writer, d *admin.DeliveryDetail) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "delivery %d\t%s %s, %s\n", d.ID, printable(d.Source), printable(d.EventType), printable(d.Status))
	fmt.Fprintf(tw, "delivery id\t%s\n", printable(d.DeliveryID))
	fmt.Fprintf(tw, "received\t%s\n", localTime(&d.ReceivedAt))
	if d.OccurredAt != nil {
		fmt.Fprintf(tw, "occurred\t%s\n", localTime(d.OccurredAt))
	}
	if d.ProcessedAt != nil {
		fmt.Fprintf(tw, "processed\t%s\n", localTime(d.ProcessedAt))
	}
	if d.ResourceKey != nil {
		fmt.Fprintf(tw, "resource\t%s\n", printable(*d.ResourceKey))
	}
	fmt.Fprintf(tw, "origin\t%s\n", printable(d.Origin))
	fmt.Fprintf(tw, "size\t%d bytes, sha256 %s\n", d.Size, printable(d.SHA256))
	if d.LastError != nil {
		fmt.Fprintf(tw, "last error\t%s\n", printableText(*d.LastError))
	}
	tw.Flush()
}

func printDeliveryHeaders(w io.Writer, d *admin.DeliveryDetail) {
	fmt.Fprintln(w, "\nheaders")
	names := make([]string, 0, len(d.Headers))
	for name := range d.Headers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, v := range d.Headers[name] {
			fmt.Fprintf(w, "  %s: %s\n", printable(name), printable(v))
		}
	}
}

// printDeliveryPayload indents a JSON payload and prints any other as it came.
func printDeliveryPayload(w io.Writer, d *admin.DeliveryDetail) {
	fmt.Fprintln(w, "\npayload")
	var payload bytes.Buffer
	switch {
	case d.PayloadBase64:
		fmt.Fprintln(w, "  (not UTF-8; base64)")
		payload.WriteString(d.Payload)
	case json.Indent(&payload, []byte(d.Payload), "  ", "  ") != nil:
		payload.Reset()
		payload.WriteString(d.Payload)
	}
	// json.Indent passes DEL and C1 controls inside strings through, and
	// a payload that is not JSON is printed as it came.
	fmt.Fprintf(w, "  %s\n", printableText(strings.TrimRight(payload.String(), "\n")))
}

// printDeliveryAttempts lists the processing jobs, with River's error of each failed attempt.
func printDeliveryAttempts(w io.Writer, d *admin.DeliveryDetail) {
	fmt.Fprintln(w, "\nattempts")
	if len(d.Attempts) == 0 {
		fmt.Fprintln(w, "  none")
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  JOB\tSTATE\tATTEMPT\tCREATED\tFINALIZED\tENQUEUED BY")
		for _, a := range d.Attempts {
			n, of := a.DeliveryAttempt()
			fmt.Fprintf(tw, "  %d\t%s\t%d/%d\t%s\t%s\t%s\n", a.JobID, printable(a.State), n, of,
				localTime(&a.CreatedAt), localTime(a.FinalizedAt), a.EnqueuedBy())
			for _, raw := range a.Errors {
				var e struct { // River's record of a failed attempt
					Attempt int    `json:"attempt"`
					Error   string `json:"error"`
				}
				if json.Unmarshal(raw, &e) == nil {
					msg, _, _ := strings.Cut(e.Error, "\n")
					fmt.Fprintf(tw, "  \t  attempt %d: %s\n", a.AttemptsBefore+e.Attempt, printable(msg))
				}
			}
		}
		tw.Flush()
	}
}

func printDeliveryKeys(w io.Writer, d *admin.DeliveryDetail) {
	fmt.Fprintln(w, "\ndownstream keys")
	if len(d.Keys) == 0 {
		fmt.Fprintln(w, "  none")
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  HANDLER\tSTEP\tKEY\tJOB\tJOB STATE")
		for _, k := range d.Keys {
			job, state := "-", "-"
			if k.JobID != nil {
				job = fmt.Sprint(*k.JobID)
			}
			if k.JobState != nil {
				state = printable(*k.JobState)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", printable(k.Handler), printable(k.Step), printable(k.Key), job, state)
		}
		tw.Flush()
	}
}

// printDeliverySends lists the delivery's sends to destinations and their attempts.
func printDeliverySends(w io.Writer, d *admin.DeliveryDetail) error {
	fmt.Fprintln(w, "\ndestinations")
	if len(d.Destinations) == 0 {
		fmt.Fprintln(w, "  none")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, sd := range d.Destinations {
		stale := ""
		if sd.Stale {
			stale = ", stale"
		}
		fmt.Fprintf(tw, "  %s\t%s%s\twebhook-id %s\n", printable(sd.Destination), printable(sd.State), stale, printable(sd.Key))
		if len(sd.Attempts) == 0 && sd.LastError != nil {
			// Decided without a request: its route failed to evaluate, or
			// filters it out now.
			msg, _, _ := strings.Cut(*sd.LastError, "\n")
			fmt.Fprintf(tw, "  \t  no attempt\t%s\n", printable(msg))
		}
		for _, a := range sd.Attempts {
			answer := "no answer"
			switch {
			case a.Status != nil:
				answer = fmt.Sprintf("HTTP %d", *a.Status)
			case a.Error == nil && a.Response != nil:
				answer = "published" // a broker has it; Response says where
			}
			detail := ""
			switch {
			case a.Error != nil:
				detail = *a.Error
			case a.Response != nil:
				detail = *a.Response
			}
			msg, _, _ := strings.Cut(detail, "\n")
			fmt.Fprintf(tw, "  \t  attempt %d\t%s  %s in %d ms  %s\n", a.Attempt, localTime(&a.AttemptedAt), answer, a.DurationMS, printable(msg))
		}
	}
	return tw.Flush()
}

// localTime formats a time for a person at this terminal; "-" for none.
func localTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Local().Format(time.DateTime)
}
