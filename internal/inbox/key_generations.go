package inbox

import (
	"context"
	_ "embed"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

var (
	//go:embed sql/key_generation_list.sql
	keyGenerationListSQL string
	//go:embed sql/key_generation_fence.sql
	keyGenerationFenceSQL string
	//go:embed sql/key_generation_open.sql
	keyGenerationOpenSQL string
	//go:embed sql/key_generation_opened.sql
	keyGenerationOpenedSQL string
	//go:embed sql/key_generation_held.sql
	keyGenerationHeldSQL string
)

// KeyGenerationIDs is how many ids one generation of inbox_key spans
// (2^40): more than any inbox takes while a generation is open, so ids
// never run past one, and few enough that thousands of generations keep
// every id below 2^53, which a JavaScript number holds exactly.
const KeyGenerationIDs = 1 << 40

// KeyGeneration is one generation of inbox_key: the keys of ids [lo, hi)
// (migrations/032_inbox_key_generations.up.sql). opened is when ids began
// to be handed out in it; nil for one made and not yet opened.
type KeyGeneration struct {
	lo, hi int64
	opened *time.Time
}

// Name is the generation's table: inbox_key_g<lo>, and inbox_key_g0 for
// the first, which starts at the lowest bigint.
func (g KeyGeneration) Name() string {
	if g.lo == math.MinInt64 {
		return "inbox_key_g0"
	}
	return "inbox_key_g" + strconv.FormatInt(g.lo, 10)
}

// IDs are the ids whose keys the generation holds: [lo, hi).
func (g KeyGeneration) IDs() (lo, hi int64) { return g.lo, g.hi }

func listKeyGenerations(ctx context.Context, q Querier) ([]KeyGeneration, error) {
	rows, err := q.Query(ctx, keyGenerationListSQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close() // a Scan error returns before the rows are read out
	var gens []KeyGeneration
	for rows.Next() {
		var g KeyGeneration
		if err := rows.Scan(&g.lo, &g.hi, &g.opened); err != nil {
			return nil, err
		}
		gens = append(gens, g)
	}
	return gens, rows.Err()
}

// currentKeyGeneration is the generation next's id falls in.
func currentKeyGeneration(gens []KeyGeneration, next int64) (KeyGeneration, error) {
	for _, g := range gens {
		if g.lo <= next && next < g.hi {
			return g, nil
		}
	}
	return KeyGeneration{}, fmt.Errorf("inbox id %d is in no generation of inbox_key", next)
}

// OpenKeyGeneration opens the next generation of inbox_key once the
// current one has been open for KeyGeneration, and returns it; nil when
// none is due. The generation and the inbox partition its first ids go to
// are made first, then opened under the key generations' fence taken
// exclusively (key_fence.sql is its shared side): the sequence skips to
// the new generation's first id once every insert in flight has
// committed. Ingest waits meanwhile, for the inserts it waits on,
// FenceTimeout at most: a busy inbox is tried again later.
func (ps *Partitions) OpenKeyGeneration(ctx context.Context, now time.Time) (*KeyGeneration, error) {
	pool := ps.Pool
	gens, err := listKeyGenerations(ctx, pool)
	if err != nil {
		return nil, err
	}
	next, err := nextInboxID(ctx, pool)
	if err != nil {
		return nil, err
	}
	cur, err := currentKeyGeneration(gens, next)
	if err != nil {
		return nil, err
	}
	if cur.opened == nil {
		// An open that moved the sequence and did not commit: the ids are
		// in cur already, so it opened all the same.
		_, err := pool.Exec(ctx, keyGenerationOpenedSQL, pgx.NamedArgs{"lo": cur.lo})
		return nil, err
	}
	if now.Sub(*cur.opened) < ps.KeyGeneration {
		return nil, nil
	}
	var cache int64
	if err := pool.QueryRow(ctx, "SELECT seqcache FROM pg_sequence WHERE seqrelid = 'inbox_id_seq'::regclass").Scan(&cache); err != nil {
		return nil, err
	}
	if cache != 1 {
		// A session would go on handing out the ids it cached, of the
		// generation before, after the open.
		return nil, fmt.Errorf("inbox_id_seq caches %d ids a session: key generations need CACHE 1 (ALTER SEQUENCE inbox_id_seq CACHE 1)", cache)
	}
	g := KeyGeneration{lo: cur.hi, hi: cur.hi + KeyGenerationIDs}
	if err := ps.makeKeyGeneration(ctx, gens, g); err != nil {
		return nil, err
	}
	if err := ps.makeFirstPartition(ctx, g, now, next); err != nil {
		return nil, err
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '"+ps.fenceTimeout()+"'"); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, keyGenerationFenceSQL); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, keyGenerationOpenSQL, pgx.NamedArgs{"lo": g.lo})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open key generation [%d, %d): %w", g.lo, g.hi, err)
	}
	return &g, nil
}

// makeKeyGeneration makes g unless an attempt that did not open it did.
func (ps *Partitions) makeKeyGeneration(ctx context.Context, gens []KeyGeneration, g KeyGeneration) error {
	for _, made := range gens {
		if made.lo == g.lo {
			return nil
		}
	}
	err := pgx.BeginFunc(ctx, ps.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '"+ps.lockTimeout()+"'"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "SELECT inbox_key_generation_create($1, $2)", g.lo, g.hi)
		return err
	})
	if err != nil {
		return fmt.Errorf("make key generation [%d, %d): %w", g.lo, g.hi, err)
	}
	return nil
}

// makeFirstPartition makes the inbox partition that takes g's first ids,
// as wide as Ensure would make the next, unless it is there.
func (ps *Partitions) makeFirstPartition(ctx context.Context, g KeyGeneration, now time.Time, next int64) error {
	parts, err := listPartitions(ctx, ps.Pool)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if p.Lo == g.lo {
			return nil
		}
	}
	width, err := ps.width(ctx, now, next)
	if err != nil {
		return err
	}
	return ps.create(ctx, Partition{Name: "inbox_p" + strconv.FormatInt(g.lo, 10), Lo: g.lo, Hi: g.lo + width})
}

// RetireKeyGenerations drops every generation of inbox_key before the
// current one whose ids no delivery holds any more, with the inbox
// partitions in its range (emptied, or made ahead and never used): no
// stored delivery needs its keys, and no id of it is handed out again.
// It returns how many it dropped.
func (ps *Partitions) RetireKeyGenerations(ctx context.Context) (int64, error) {
	gens, err := listKeyGenerations(ctx, ps.Pool)
	if err != nil {
		return 0, err
	}
	next, err := nextInboxID(ctx, ps.Pool)
	if err != nil {
		return 0, err
	}
	var dropped int64
	for _, g := range gens {
		if g.hi > next {
			break // current, or made ahead
		}
		var held bool
		if err := ps.Pool.QueryRow(ctx, keyGenerationHeldSQL, pgx.NamedArgs{"lo": g.lo, "hi": g.hi}).Scan(&held); err != nil {
			return dropped, err
		}
		if held {
			continue // a delivery retention keeps; the later ones may go
		}
		ok, err := ps.dropKeyGeneration(ctx, g)
		if IsLockTimeout(err) {
			ps.logger().Info("retention: the inbox is busy; dropping the key generation next pass", "generation", g.Name())
			return dropped, nil
		}
		if err != nil {
			return dropped, err
		}
		if ok {
			dropped++
		}
	}
	return dropped, nil
}

// dropKeyGeneration detaches g and the inbox partitions in its range,
// holding the inbox's and the keys' locks, once it has checked again
// that no delivery holds an id of g, and drops them after.
func (ps *Partitions) dropKeyGeneration(ctx context.Context, g KeyGeneration) (bool, error) {
	dropped := false
	err := pgx.BeginFunc(ctx, ps.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '"+ps.lockTimeout()+"'"); err != nil {
			return err
		}
		// inbox_key first, as ingest's statement locks it.
		if _, err := tx.Exec(ctx, "LOCK TABLE inbox_key, inbox, inbox_outcome IN ACCESS EXCLUSIVE MODE"); err != nil {
			return err
		}
		var held bool
		if err := tx.QueryRow(ctx, keyGenerationHeldSQL, pgx.NamedArgs{"lo": g.lo, "hi": g.hi}).Scan(&held); err != nil || held {
			return err
		}
		parts, err := listPartitions(ctx, tx)
		if err != nil {
			return err
		}
		for _, p := range parts {
			if p.Lo >= g.lo && p.Hi <= g.hi {
				if err := detach(ctx, tx, "inbox", p.Name); err != nil {
					return err
				}
				if err := detach(ctx, tx, "inbox_outcome", p.outcomeName()); err != nil {
					return err
				}
			}
		}
		if err := detach(ctx, tx, "inbox_key", g.Name()); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "DELETE FROM inbox_key_generation WHERE lo = $1", g.lo)
		dropped = err == nil
		return err
	})
	if err != nil || !dropped {
		return false, err
	}
	return true, ps.dropDetached(ctx)
}
