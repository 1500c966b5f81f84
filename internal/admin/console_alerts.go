package admin

import (
	_ "embed"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"
)

//go:embed sql/console_alerts_list.sql
var consoleAlertsListSQL string

// alertRow is an alert in the console's list.
type alertRow struct {
	ID         int64
	Rule       string
	Subject    string
	Since      time.Time
	OpenedAt   time.Time
	ResolvedAt *time.Time
	Summary    string
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
	return s.render(c, http.StatusOK, "alerts", "layout", alertsView{pageBase: s.page(c, "Alerts", "alerts"), Items: items})
}
