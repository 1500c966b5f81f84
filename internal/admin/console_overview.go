package admin

import (
	"context"
	_ "embed"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/inbox"
)

var (
	//go:embed sql/console_ingest_minutes.sql
	consoleIngestMinutesSQL string
)

// chartWindows are the spans the Overview's charts offer, shortest first.
// The longest is within the 48 h of counts retention keeps.
var chartWindows = []chartWindow{{"15m", 15 * time.Minute}, {"1h", time.Hour}, {"6h", 6 * time.Hour}, {"24h", 24 * time.Hour}}

type chartWindow struct {
	Name string
	span time.Duration
}

// maxChartWindow is the longest span, the one the counts are read for.
var maxChartWindow = chartWindows[len(chartWindows)-1]

// outcomeGroups are the charts' series, bottom to top, and the ingest
// outcomes (hookinbox_deliveries_total's) each one counts. Everything
// else ingest answered with a 4xx is "rejected".
var outcomeGroups = []chartSeries{
	{"accepted", "#2e9e5b", []string{"accepted"}},
	{"duplicate", "#7aa6d8", []string{"duplicate"}},
	{"duplicate_body", "#b3c9e6", []string{"duplicate_body"}},
	{"conflict", "#e0a100", []string{"conflict"}},
	{"invalid_signature", "#d0453a", []string{"invalid_signature", "timestamp_out_of_tolerance"}},
	{"rejected", "#9b6fc4", nil},
	{"unavailable", "#5c5c5c", []string{"unavailable"}},
}

func outcomeGroup(outcome string) int {
	for i, g := range outcomeGroups {
		if slices.Contains(g.outcomes, outcome) {
			return i
		}
	}
	return rejectedGroup
}

// chartSeries is one series of the ingest charts.
type chartSeries struct {
	Name, Color string
	outcomes    []string
}

// rejectedGroup is the index of "rejected" in outcomeGroups.
var rejectedGroup = slices.IndexFunc(outcomeGroups, func(g chartSeries) bool { return g.Name == "rejected" })

type overviewView struct {
	pageBase
	Sources      []*sourceOverview
	Groups       []string
	Chart        chartData
	Window       string   // the chart's span
	Windows      []string // the spans on offer
	AutoWindow   bool     // Window was chosen to fit the data, not asked for
	Destinations []destination.Status
	Backlog      int64
	Oldest       *time.Time
	Failed       int64
	// FailedSends counts the sends kept failed, every destination's: a
	// delivery processed may still have one (a route that failed to
	// evaluate, a destination that refused it to the end).
	FailedSends int64
	// OpenAlerts are the alerts open now, newest first (at most
	// overviewAlerts); OpenAlertCount counts them all.
	OpenAlerts     []alertRow
	OpenAlertCount int64
}

type sourceOverview struct {
	Name      string
	Backlog   int64
	Oldest    *time.Time // the oldest delivery not yet processed
	Failed    int64
	Totals    []int64 // per outcome group, over the chart's window
	FailedURL string
}

// chartData is what console.js draws: per source, per outcome group, the
// count of each minute from Start.
type chartData struct {
	Start  int64              `json:"start"` // unix seconds of the first minute
	Groups []string           `json:"groups"`
	Colors []string           `json:"colors"`
	Series map[string][][]int `json:"series"`
}

// consoleOverview is GET /console/: per source, requests per minute by
// outcome over 24 h (from ingest_minute), the backlog and its oldest
// delivery, the failed deliveries; and every destination's health.
func (s *Server) consoleOverview(c *fiber.Ctx) error {
	ctx := c.UserContext()
	v := overviewView{pageBase: s.page(c, "Overview", "overview")}
	bySource := map[string]*sourceOverview{}
	source := func(name string) *sourceOverview {
		if so, ok := bySource[name]; ok {
			return so
		}
		so := &sourceOverview{Name: name, Totals: make([]int64, len(outcomeGroups)),
			FailedURL: "/console/deliveries?" + url.Values{"source": {name}, "status": {"failed"}}.Encode()}
		bySource[name] = so
		v.Sources = append(v.Sources, so)
		return so
	}
	for _, name := range s.cfg.Sources {
		source(name)
	}
	if err := s.overviewBacklog(ctx, &v, source); err != nil {
		return err
	}
	var err error
	if v.OpenAlerts, v.OpenAlertCount, err = s.openAlerts(ctx); err != nil {
		return err
	}
	asked := c.Query("window")
	for _, w := range chartWindows {
		v.Windows = append(v.Windows, w.Name)
	}
	if asked != "" && !slices.Contains(v.Windows, asked) {
		return errBadRequest("window must be one of " + strings.Join(v.Windows, ", "))
	}
	if v.Chart, v.Window, err = s.overviewChart(ctx, asked, source); err != nil {
		return err
	}
	v.AutoWindow = asked == ""
	for _, g := range outcomeGroups {
		v.Groups = append(v.Groups, g.Name)
	}
	if s.cfg.Destinations != nil {
		if v.Destinations, err = s.cfg.Destinations.Statuses(ctx); err != nil {
			return err
		}
		for _, d := range v.Destinations {
			v.FailedSends += d.Counts["failed"]
		}
	}
	return s.render(c, http.StatusOK, "overview", "layout", v)
}

func (s *Server) overviewBacklog(ctx context.Context, v *overviewView, source func(string) *sourceOverview) error {
	rows, err := inbox.Backlog(ctx, s.cfg.Pool)
	if err != nil {
		return err
	}
	var (
		name, status string
		n            int64
		oldest       time.Time
	)
	_, err = pgx.ForEachRow(rows, []any{&name, &status, &n, &oldest}, func() error {
		so := source(name)
		if status == "failed" {
			so.Failed, v.Failed = n, v.Failed+n
			return nil
		}
		at := oldest
		so.Backlog, so.Oldest, v.Backlog = n, &at, v.Backlog+n
		if v.Oldest == nil || at.Before(*v.Oldest) {
			v.Oldest = &at
		}
		return nil
	})
	return err
}

// overviewChart reads the last day's counts and lays out the window asked
// for, or, when none is, the shortest that holds them all: a new install's
// first hour of traffic is then a chart, not a spike at the edge of a day.
func (s *Server) overviewChart(ctx context.Context, asked string, source func(string) *sourceOverview) (chartData, string, error) {
	now := time.Now().Truncate(time.Minute)
	type count struct {
		minute        time.Time
		name, outcome string
		n             int64
	}
	var counts []count
	rows, err := s.cfg.Pool.Query(ctx, consoleIngestMinutesSQL, pgx.NamedArgs{"since": now.Add(-maxChartWindow.span + time.Minute)})
	if err != nil {
		return chartData{}, "", err
	}
	var c count
	if _, err = pgx.ForEachRow(rows, []any{&c.minute, &c.name, &c.outcome, &c.n}, func() error {
		counts = append(counts, c)
		return nil
	}); err != nil {
		return chartData{}, "", err
	}

	window := maxChartWindow
	for _, w := range chartWindows {
		holdsAll := !slices.ContainsFunc(counts, func(c count) bool { return c.minute.Before(now.Add(-w.span + time.Minute)) })
		if w.Name == asked || asked == "" && holdsAll {
			window = w
			break
		}
	}
	start := now.Add(-window.span + time.Minute)
	minutes := int(window.span / time.Minute)
	d := chartData{Start: start.Unix(), Series: map[string][][]int{}}
	for _, g := range outcomeGroups {
		d.Groups, d.Colors = append(d.Groups, g.Name), append(d.Colors, g.Color)
	}
	for _, c := range counts {
		i := int(c.minute.Sub(start) / time.Minute)
		if i < 0 || i >= minutes {
			continue
		}
		series, ok := d.Series[c.name]
		if !ok {
			series = make([][]int, len(outcomeGroups))
			for g := range series {
				series[g] = make([]int, minutes)
			}
			d.Series[c.name] = series
		}
		g := outcomeGroup(c.outcome)
		series[g][i] += int(c.n)
		source(c.name).Totals[g] += c.n
	}
	return d, window.Name, nil
}
