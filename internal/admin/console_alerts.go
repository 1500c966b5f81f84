package admin

import (
	"context"
	_ "embed"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/internal/alerts"
)

var (
	//go:embed sql/console_alerts_list.sql
	consoleAlertsListSQL string
	//go:embed sql/console_alerts_open.sql
	consoleAlertsOpenSQL string
)

// overviewAlerts bounds the open alerts the Overview lists; the Alerts
// page has them all.
const overviewAlerts = 10

// alertRow is an alert in the console's list.
type alertRow struct {
	ID         int64
	Rule       string
	Subject    string
	Since      time.Time
	OpenedAt   time.Time
	ResolvedAt *time.Time
	Summary    string
	// SubjectURL is the console's page of the subject; "" for none.
	SubjectURL string `db:"-"`
}

// withSubjectURLs sets each row's SubjectURL.
func withSubjectURLs(items []alertRow) []alertRow {
	for i, a := range items {
		if p := alerts.SubjectPath(a.Rule, a.Subject); p != "" {
			items[i].SubjectURL = "/console/" + p
		}
	}
	return items
}

// openAlerts reads the alerts open now, at most overviewAlerts of them,
// and how many are open.
func (s *Server) openAlerts(ctx context.Context) (items []alertRow, open int64, err error) {
	rows, err := s.cfg.Pool.Query(ctx, consoleAlertsOpenSQL, pgx.NamedArgs{"limit": overviewAlerts})
	if err != nil {
		return nil, 0, err
	}
	var a alertRow
	_, err = pgx.ForEachRow(rows, []any{&a.ID, &a.Rule, &a.Subject, &a.Since, &a.OpenedAt, &a.ResolvedAt, &a.Summary, &open}, func() error {
		items = append(items, a)
		return nil
	})
	return withSubjectURLs(items), open, err
}

type alertsView struct {
	pageBase
	Items []alertRow
}

// consoleAlerts is GET /console/alerts: the alerts open now, then the
// latest resolved ones.
func (s *Server) consoleAlerts(c *fiber.Ctx) error {
	rows, err := s.cfg.Pool.Query(c.UserContext(), consoleAlertsListSQL, pgx.NamedArgs{"limit": DefaultListLimit})
	if err != nil {
		return err
	}
	items, err := pgx.CollectRows(rows, pgx.RowToStructByPos[alertRow])
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, "alerts", "layout", alertsView{pageBase: s.page(c, "Alerts", "alerts"), Items: withSubjectURLs(items)})
}
