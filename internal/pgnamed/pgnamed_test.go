package pgnamed

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// Args rewrite as pgx.NamedArgs do, call after call: the cached rewrite
// keeps pgx's reading of comments, string literals, casts and repeated
// names, and a name a call lacks is NULL.
func TestArgsRewriteAsNamedArgs(t *testing.T) {
	t.Parallel()
	const sql = `-- a comment naming @not_a_param
SELECT @b::int + @a::int, '@c in a literal', @a::text || /* @d */ @e`
	calls := []Args{
		{"a": 1, "b": 2},                   // lacks e: pgx's rewrite, nothing cached
		{"a": 1, "b": 2, "e": "x"},         // learns the statement
		{"e": "y", "b": 3, "a": 4},         // reuses it, keys in another order
		{"a": 5, "b": 6},                   // lacks e again: NULL in its place
		{"a": 7, "b": 8, "e": "z", "f": 9}, // an extra name is ignored
	}
	for i, a := range calls {
		wantSQL, wantArgs, err := pgx.NamedArgs(a).RewriteQuery(context.Background(), nil, sql, nil)
		require.NoError(t, err)
		gotSQL, gotArgs, err := a.RewriteQuery(context.Background(), nil, sql, nil)
		require.NoError(t, err)
		require.Equal(t, wantSQL, gotSQL, "call %d", i)
		require.Equal(t, wantArgs, gotArgs, "call %d", i)
		_, cached := rewrites.Load(sql)
		require.Equal(t, i > 0, cached, "call %d", i)
	}
}

// Through a real server, alone and in a batch, each value reaches its
// name's place.
func TestArgsReachTheirPlaces(t *testing.T) {
	t.Parallel()
	pool := testdb.New(t)
	ctx := context.Background()
	const sql = `SELECT @second::text, @first::int, @second::text || @first::text`
	for range 2 { // learning, then cached
		var s, both string
		var n int
		require.NoError(t, pool.QueryRow(ctx, sql, Args{"first": 7, "second": "b"}).Scan(&s, &n, &both))
		require.Equal(t, "b", s)
		require.Equal(t, 7, n)
		require.Equal(t, "b7", both)
	}
	b := &pgx.Batch{}
	b.Queue(sql, Args{"first": 1, "second": "x"})
	b.Queue(sql, Args{"first": 2, "second": "y"})
	res := pool.SendBatch(ctx, b)
	for _, want := range []string{"x1", "y2"} {
		var s, both string
		var n int
		require.NoError(t, res.QueryRow().Scan(&s, &n, &both))
		require.Equal(t, want, both)
	}
	require.NoError(t, res.Close())
}
