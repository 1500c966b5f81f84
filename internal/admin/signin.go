package admin

import (
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/hookinbox/hookinbox/internal/httpedge"
	"github.com/hookinbox/hookinbox/internal/loglimit"
)

// DefaultSignInAddresses is Config.SignInAddresses' default. The limit's
// burst and period default to admin.sign_in's (config.DefaultSignInBurst,
// config.DefaultSignInEvery).
const DefaultSignInAddresses = 10000

// MinTokenLength is the shortest admin token serve accepts: 16 random
// characters are beyond guessing at one try a second per address.
const MinTokenLength = 16

// placeholders are the words of templates' tokens ("change-me",
// "<your-token>"), found in a token lowercased and stripped of all but
// letters and digits.
var placeholders = []string{"changeme", "replaceme", "placeholder", "yourtoken", "youradmintoken", "yoursecret"}

// WeakToken says why token is too weak to protect the admin listener
// (shorter than MinTokenLength, or a placeholder), or "" when it is not.
// An empty token is not weak: it means no authentication, allowed on
// loopback only (Config.validate).
func WeakToken(token string) string {
	if token == "" {
		return ""
	}
	norm := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return -1
	}, token)
	for _, p := range placeholders {
		if strings.Contains(norm, p) {
			return "is a placeholder"
		}
	}
	if len(token) < MinTokenLength {
		return fmt.Sprintf("is shorter than %d characters", MinTokenLength)
	}
	if strings.Count(token, token[:1]) == len(token) {
		return "is one character repeated"
	}
	return ""
}

// signInLimit slows token guessing. Each client address has a bucket of
// burst tries, refilled one per every. Every presented token takes one
// before it is compared, and a right one gives it back, so concurrent
// guesses cannot outrun the bucket; an address with none left gets 429
// until one is back, its right token included (a 429 only for wrong ones
// would tell a guesser which guess was right). The limit is per address:
// an operator signing in from elsewhere is not slowed.
//
// The address is the connection's: no proxy header is trusted, so a
// client cannot choose the key it is counted under. An IPv6 client
// counts as its /64, which one host usually holds whole.
//
// The table holds at most max addresses. A full bucket is as good as
// none, so refilled entries are dropped when room is needed; when none
// can be, the addresses left out share one bucket. An attacker with many
// addresses thus gets no more tries than the table allows, and the table
// never grows past it.
type signInLimit struct {
	burst float64
	every time.Duration
	max   int

	logger *slog.Logger
	lines  *loglimit.PerSecond

	mu        sync.Mutex
	buckets   map[string]*bucket
	overflow  bucket
	lastSweep time.Time
}

type bucket struct {
	tries float64 // left at the time of at
	at    time.Time
}

// signInLogLines bounds the lines a second about failed and throttled
// sign-ins: one per request at most, and no more than this whatever the
// number of requests.
const signInLogLines = 5

func newSignInLimit(cfg Config) *signInLimit {
	return &signInLimit{burst: float64(cfg.SignIn.Burst), every: cfg.SignIn.Every.Std(), max: cfg.SignInAddresses,
		logger: cfg.Logger, lines: loglimit.New(signInLogLines), buckets: map[string]*bucket{},
		overflow: bucket{tries: float64(cfg.SignIn.Burst)}}
}

// refill brings b's tries to now.
func (l *signInLimit) refill(b *bucket, now time.Time) {
	if !b.at.IsZero() && now.After(b.at) {
		b.tries = math.Min(l.burst, b.tries+float64(now.Sub(b.at))/float64(l.every))
	}
	b.at = now
}

// take takes a try for key at now. It returns the bucket taken from, or,
// when none is left, how long until one is.
func (l *signInLimit) take(key string, now time.Time) (*bucket, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucketOf(key, now)
	l.refill(b, now)
	if b.tries < 1 {
		return nil, time.Duration((1 - b.tries) * float64(l.every))
	}
	b.tries--
	return b, 0
}

// giveBack returns the try a right token took.
func (l *signInLimit) giveBack(b *bucket) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b.tries = math.Min(l.burst, b.tries+1)
}

// bucketOf finds or makes key's bucket; l.mu is held.
func (l *signInLimit) bucketOf(key string, now time.Time) *bucket {
	if b, ok := l.buckets[key]; ok {
		return b
	}
	if len(l.buckets) >= l.max && now.Sub(l.lastSweep) >= l.every {
		// At most once per every: a sweep reads the whole table.
		l.lastSweep = now
		for k, b := range l.buckets {
			if l.refill(b, now); b.tries >= l.burst {
				delete(l.buckets, k)
			}
		}
	}
	if len(l.buckets) >= l.max {
		return &l.overflow
	}
	b := &bucket{tries: l.burst, at: now}
	l.buckets[key] = b
	return b
}

// clientKey is the key a request counts under: its connection's address,
// an IPv6 one as its /64, as for the listener's connection limits.
func clientKey(c *fiber.Ctx) string {
	return httpedge.ClientPrefix(c.Context().RemoteAddr()).String()
}

// signInThrottled answers a client with no tries left.
type signInThrottled struct{ wait time.Duration }

func (e *signInThrottled) Error() string {
	return fmt.Sprintf("too many wrong admin tokens from this address: try again in %ss", retryAfterSeconds(e.wait))
}

// CodeSignInThrottled is the error code of a sign-in refused because its
// address presented too many wrong tokens.
const CodeSignInThrottled = "sign_in_throttled"

func retryAfterSeconds(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}

// try takes a try for the request's address, or answers 429 with
// Retry-After (and logs it, within the line budget) and returns nil.
func (l *signInLimit) try(c *fiber.Ctx, via string) (*bucket, error) {
	now := time.Now()
	b, wait := l.take(clientKey(c), now)
	if b != nil {
		return b, nil
	}
	c.Set(fiber.HeaderRetryAfter, retryAfterSeconds(wait))
	l.log(c, now, "admin sign-in throttled", via, slog.String("retry_after", retryAfterSeconds(wait)+"s"))
	return nil, &signInThrottled{wait: wait}
}

// failed logs a wrong token, within the line budget.
func (l *signInLimit) failed(c *fiber.Ctx, via string) {
	l.log(c, time.Now(), "admin sign-in failed", via)
}

func (l *signInLimit) log(c *fiber.Ctx, now time.Time, msg, via string, more ...slog.Attr) {
	ok, held := l.lines.Allow(now)
	if !ok {
		return
	}
	attrs := append([]slog.Attr{slog.String("remote_addr", c.Context().RemoteAddr().String()),
		slog.String("via", via), slog.String("method", c.Method()), slog.String("path", c.Path())}, more...)
	if held > 0 {
		attrs = append(attrs, slog.Int("suppressed_since_last", held))
	}
	l.logger.LogAttrs(c.Context(), slog.LevelWarn, msg, attrs...)
}

// signInVia names how a token was presented, for the log.
func signInVia(header string) string {
	scheme, _, _ := strings.Cut(header, " ")
	switch strings.ToLower(scheme) {
	case "bearer", "basic":
		return strings.ToLower(scheme)
	}
	return "other"
}
