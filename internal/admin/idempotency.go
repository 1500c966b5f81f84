package admin

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"
)

var (
	//go:embed sql/idempotency_insert.sql
	idemInsertSQL string
	//go:embed sql/idempotency_lock.sql
	idemLockSQL string
	//go:embed sql/idempotency_take.sql
	idemTakeSQL string
	//go:embed sql/idempotency_complete.sql
	idemCompleteSQL string
	//go:embed sql/idempotency_release.sql
	idemReleaseSQL string
)

// MaxIdempotencyKeyLength bounds the Idempotency-Key header (bytes).
const MaxIdempotencyKeyLength = 255

const txLocal = "admin.tx"

// claimKind is what the first look at a key decided.
type claimKind int

const (
	claimOwned      claimKind = iota // run the operation
	claimStored                      // answer with the stored response
	claimMismatch                    // same key, different request
	claimInProgress                  // another request with this key is running
)

type claim struct {
	kind       claimKind
	status     int
	body       []byte
	retryAfter int
}

// keyRef names one api_idempotency row and, once owned, its lock.
type keyRef struct {
	scope, operation, key string
	hash                  []byte
	spelledHash           []byte // the fingerprint a key stored by an older release has
	lockToken             string
}

func (k keyRef) args() pgx.NamedArgs {
	return pgx.NamedArgs{"scope": k.scope, "operation": k.operation, "key": k.key,
		"request_hash": k.hash, "lock_token": k.lockToken}
}

// storedLocation reads the Location header of an operation's answer from
// its stored body, for the operations whose answer has one: a repeat gets
// the first answer's headers that matter, and api_idempotency keeps only
// its status and body.
var storedLocation = map[string]func(body []byte) string{
	"replay_delivery": replayLocation,
	"bulk_replay":     bulkReplayLocation,
}

// mutation wraps a mutating route: it runs in a transaction (read it with
// tx(c)) and, when the request carries an Idempotency-Key, follows the
// contract: the first request runs, and its response is stored in the
// operation's own transaction; a repeat gets that response byte for byte
// with Idempotent-Replayed: true (and its Location: storedLocation); the
// same key on another request is 422; a key whose request is still
// running is 409; a key whose holder died (lock expired) is taken over; an
// expired key starts afresh.
func (s *Server) mutation(operation string, h fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Locals(operationLocal, operation) // for the audit log
		key := c.Get("Idempotency-Key")
		if len(key) > MaxIdempotencyKeyLength {
			return &apiError{http.StatusBadRequest, CodeInvalidIdempotency,
				fmt.Sprintf("Idempotency-Key is longer than %d bytes", MaxIdempotencyKeyLength)}
		}
		if key == "" {
			return s.runInTx(c, h, nil) // not deduplicated: the caller chose so
		}
		ref := &keyRef{scope: principalOf(c).keySpace, operation: operation, key: key, hash: requestHash(c), spelledHash: spelledRequestHash(c), lockToken: newLockToken()}
		cl, err := s.claimKey(c.UserContext(), ref)
		if err != nil {
			return err
		}
		switch cl.kind {
		case claimStored:
			c.Set("Idempotent-Replayed", "true")
			if locate := storedLocation[operation]; locate != nil && cl.status < 300 {
				if loc := locate(cl.body); loc != "" {
					c.Set(fiber.HeaderLocation, loc)
				}
			}
			c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
			return c.Status(cl.status).Send(cl.body)
		case claimMismatch:
			return &apiError{http.StatusUnprocessableEntity, CodeIdempotencyKeyReused,
				"this Idempotency-Key was used for a different request"}
		case claimInProgress:
			c.Set(fiber.HeaderRetryAfter, strconv.Itoa(cl.retryAfter))
			return &apiError{http.StatusConflict, CodeRequestInProgress,
				"a request with this Idempotency-Key is still in progress; retry later"}
		}
		return s.runInTx(c, h, ref)
	}
}

// claimKey decides, in its own committed transaction, what to do with ref.
func (s *Server) claimKey(ctx context.Context, ref *keyRef) (claim, error) {
	var cl claim
	err := pgx.BeginFunc(ctx, s.cfg.Pool, func(tx pgx.Tx) error {
		args := ref.args()
		args["lock_secs"] = s.cfg.IdempotencyLock.Seconds()
		args["ttl_secs"] = s.cfg.IdempotencyTTL.Std().Seconds()
		var one int
		err := tx.QueryRow(ctx, idemInsertSQL, args).Scan(&one)
		if err == nil {
			cl = claim{kind: claimOwned}
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		var (
			hash        []byte
			state       string
			status      *int
			body        []byte
			lockExpired bool
			expired     bool
		)
		if err := tx.QueryRow(ctx, idemLockSQL, args).Scan(&hash, &state, &status, &body, &lockExpired, &expired, &cl.retryAfter); err != nil {
			return err // including a row deleted meanwhile: the client retries
		}
		take := func(renew bool) error {
			args["renew"] = renew
			_, err := tx.Exec(ctx, idemTakeSQL, args)
			cl = claim{kind: claimOwned}
			return err
		}
		switch {
		case expired:
			return take(true)
		case !bytes.Equal(hash, ref.hash) && !bytes.Equal(hash, ref.spelledHash):
			cl.kind = claimMismatch
		case state == "completed":
			cl = claim{kind: claimStored, status: *status, body: body}
		case !lockExpired:
			cl.kind = claimInProgress
		default:
			return take(false)
		}
		return nil
	})
	return cl, err
}

// runInTx runs h with a transaction and settles ref with h's response:
// stored with h's effects on success, stored alone for a client error,
// released for a failure on our side so that a retry runs.
func (s *Server) runInTx(c *fiber.Ctx, h fiber.Handler, ref *keyRef) error {
	ctx := c.UserContext()
	tx, err := s.cfg.Pool.Begin(ctx)
	if err != nil {
		s.release(ctx, ref)
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // no-op after commit
	c.Locals(txLocal, tx)

	if herr := h(c); herr != nil {
		_ = tx.Rollback(ctx) // the operation's effects go; its answer may stay
		if err := s.errorHandler(c, herr); err != nil {
			return err
		}
		status := c.Response().StatusCode()
		if ref == nil || status >= 500 || status == http.StatusConflict {
			s.release(ctx, ref)
			return nil
		}
		return pgx.BeginFunc(ctx, s.cfg.Pool, func(tx pgx.Tx) error {
			_, err := s.complete(ctx, tx, ref, status, c.Response().Body())
			return err
		})
	}

	if ref != nil {
		owned, err := s.complete(ctx, tx, ref, c.Response().StatusCode(), c.Response().Body())
		if err != nil {
			s.release(ctx, ref)
			return err
		}
		if !owned {
			// Our lock expired and another request took the key over: it
			// will do the work; ours must not also happen.
			c.Response().ResetBody()
			c.Set(fiber.HeaderRetryAfter, "1")
			return &apiError{http.StatusConflict, CodeRequestInProgress,
				"this request took too long and another with the same Idempotency-Key took over; retry later"}
		}
	}
	if err := tx.Commit(ctx); err != nil {
		s.release(ctx, ref)
		c.Response().ResetBody()
		return err
	}
	return nil
}

func (s *Server) complete(ctx context.Context, tx pgx.Tx, ref *keyRef, status int, body []byte) (bool, error) {
	args := ref.args()
	args["status_code"] = status
	args["response_body"] = bytes.Clone(body)
	tag, err := tx.Exec(ctx, idemCompleteSQL, args)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// release gives a key back after a failure on our side. If it cannot (the
// database is down), the lock's expiry does the same a little later.
func (s *Server) release(ctx context.Context, ref *keyRef) {
	if ref == nil {
		return
	}
	if _, err := s.cfg.Pool.Exec(context.WithoutCancel(ctx), idemReleaseSQL, ref.args()); err != nil {
		s.logger.Warn("could not release an idempotency key; its lock will expire", "operation", ref.operation, "error", err)
	}
}

// tx returns the transaction a mutating route runs in.
func tx(c *fiber.Ctx) pgx.Tx { return c.Locals(txLocal).(pgx.Tx) }

// requestHash fingerprints a request: method, path, sorted query and body,
// the JSON body in canonical form so that key order and spacing do not
// make two equal requests differ. The path is the route's pattern with
// its parameters' values: the router ignores the path's case and a
// trailing slash, and a retry that spells them otherwise is the same
// request.
func requestHash(c *fiber.Ctx) []byte {
	route := c.Route()
	return fingerprint(c, func(h io.Writer) {
		fmt.Fprintf(h, "%s\n", route.Path)
		for _, p := range route.Params {
			fmt.Fprintf(h, "%s=%q\n", p, c.Params(p))
		}
	})
}

// spelledRequestHash is the fingerprint of releases that took the path as
// spelled. A key such a release stored (kept for its TTL) still matches
// the retry of its own request across an upgrade, rather than getting 422.
func spelledRequestHash(c *fiber.Ctx) []byte {
	return fingerprint(c, func(h io.Writer) { fmt.Fprintf(h, "%s\n", c.Path()) })
}

// fingerprint hashes the method, what path writes, the sorted query and
// the canonical body.
func fingerprint(c *fiber.Ctx, path func(io.Writer)) []byte {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", c.Method())
	path(h)
	var query []string
	c.Request().URI().QueryArgs().VisitAll(func(k, v []byte) { query = append(query, string(k)+"="+string(v)) })
	sort.Strings(query)
	for _, q := range query {
		fmt.Fprintf(h, "%s&", q)
	}
	h.Write([]byte("\n"))
	h.Write(canonicalJSON(c.Body()))
	return h.Sum(nil)
}

// canonicalJSON is body re-encoded with sorted keys and no spacing, or body
// itself when it is not one JSON value (a retry with more after the value
// is another request).
func canonicalJSON(body []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := decodeOne(dec, &v); err != nil {
		return body
	}
	out, err := json.Marshal(v) // maps marshal with sorted keys
	if err != nil {
		return body
	}
	return out
}

// decodeOne decodes the one JSON value dec reads. A Decoder stops after
// the first value; anything but whitespace after it is an error here.
func decodeOne(dec *json.Decoder, v any) error {
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

func newLockToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
