package admin

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"

	"github.com/hookinbox/hookinbox/ingest"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/linediff"
)

// conflictRow is a delivery_conflict row in the list.
type conflictRow struct {
	ID          int64
	Source      string
	DeliveryID  string
	InboxID     *int64 // the stored delivery; nil once retention deleted it
	ReceivedAt  time.Time
	SHA256      []byte
	Size        int
	StoredSHA   []byte
	conflicting []byte
}

func (r conflictRow) Short() string       { return hex.EncodeToString(r.SHA256)[:12] }
func (r conflictRow) StoredShort() string { return shortHex(r.StoredSHA) }
func (r conflictRow) Body() string        { return text(r.conflicting) }

func shortHex(b []byte) string {
	if len(b) == 0 {
		return "—"
	}
	return hex.EncodeToString(b)[:12]
}

type conflictsView struct {
	pageBase
	Items   []conflictRow
	NextURL string
}

// consoleConflicts is GET /console/conflicts: every webhook refused with
// 409 delivery_id_conflict that retention still keeps, newest first.
func (s *Server) consoleConflicts(c *fiber.Ctx) error {
	var cursor *int64
	if q := c.Query("cursor"); q != "" {
		id, err := decodeCursor(q)
		if err != nil {
			return errBadRequest("cursor is not one this page made")
		}
		cursor = &id
	}
	rows, err := inbox.ListConflicts(c.UserContext(), s.cfg.Pool, cursor, DefaultListLimit+1)
	if err != nil {
		return err
	}
	items, err := pgx.CollectRows(rows, pgx.RowToStructByPos[conflictRow])
	if err != nil {
		return err
	}
	v := conflictsView{pageBase: s.page(c, "Conflicts", "conflicts"), Items: items}
	if len(items) > DefaultListLimit {
		v.Items = items[:DefaultListLimit]
		v.NextURL = "/console/conflicts?cursor=" + encodeCursor(v.Items[DefaultListLimit-1].ID)
	}
	return s.render(c, http.StatusOK, "conflicts", "layout", v)
}

type conflictView struct {
	pageBase
	C           conflictRow
	SHA, Stored string // full sha256s
	StoredAt    *time.Time
	StoredSize  *int
	Headers     []headerLine
	Diff        []linediff.Row
	// Same: the bodies differ in their bytes only (spacing, key order's
	// whitespace), not once pretty-printed; the diff is of the raw bytes.
	Same bool
	// Whole: too different for a diff; both are shown whole.
	Whole                 bool
	Left, Right           string
	Truncated, StoredGone bool
}

// consoleConflict is GET /console/conflicts/{id}: the stored and the
// conflicting payload side by side as a diff, and the refused request's
// headers.
func (s *Server) consoleConflict(c *fiber.Ctx) error {
	id, err := pathID(c)
	if err != nil {
		return err
	}
	var (
		r          conflictRow
		headers    map[string][]string
		storedAt   *time.Time
		storedBody []byte
		storedSize *int
	)
	err = inbox.GetConflict(c.UserContext(), s.cfg.Pool, id, ingest.MaxConflictBody).Scan(
		&r.ID, &r.Source, &r.DeliveryID, &r.ReceivedAt, &r.SHA256, &headers, &r.conflicting, &r.Size,
		&r.InboxID, &storedAt, &r.StoredSHA, &storedBody, &storedSize)
	if errors.Is(err, pgx.ErrNoRows) {
		return errNotFound(fmt.Sprintf("no conflict with id %d", id))
	}
	if err != nil {
		return err
	}
	v := conflictView{pageBase: s.page(c, "Conflict "+r.DeliveryID, "conflicts"), C: r, SHA: hex.EncodeToString(r.SHA256),
		Stored: hex.EncodeToString(r.StoredSHA), StoredAt: storedAt, StoredSize: storedSize,
		StoredGone: r.InboxID == nil, Truncated: r.Size > len(r.conflicting) || (storedSize != nil && *storedSize > len(storedBody))}
	for name, values := range headers {
		v.Headers = append(v.Headers, headerLine{name, strings.Join(values, ", ")})
	}
	sort.Slice(v.Headers, func(i, j int) bool { return v.Headers[i].Name < v.Headers[j].Name })
	if !v.StoredGone {
		v.diff(storedBody, r.conflicting)
	}
	return s.render(c, http.StatusOK, "conflict", "layout", v)
}

// maxDiffChanges bounds the diff's work (it grows with the square of the
// changed lines); bodies further apart are shown whole.
const maxDiffChanges = 2000

// diff compares the bodies pretty-printed when both are JSON (key order
// kept), else, or when that shows no difference, as they are.
func (v *conflictView) diff(stored, conflicting []byte) {
	left, right := pretty(stored), pretty(conflicting)
	if left == right {
		v.Same = true
		left, right = text(stored), text(conflicting)
	}
	a, b := strings.Split(left, "\n"), strings.Split(right, "\n")
	edits, ok := linediff.Lines(a, b, maxDiffChanges)
	if !ok {
		v.Whole, v.Left, v.Right = true, left, right
		return
	}
	v.Diff = linediff.SideBySide(a, b, edits, 3)
}

func pretty(body []byte) string {
	var out bytes.Buffer
	if json.Indent(&out, body, "", "  ") == nil {
		return out.String()
	}
	return text(body)
}

// text is body as text: invalid UTF-8 is shown as U+FFFD.
func text(body []byte) string { return strings.ToValidUTF8(string(body), "\uFFFD") }
