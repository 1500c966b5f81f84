package destination

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
)

// orderInput is an order of n items with a note of noteLen bytes: the
// shape of a transform that names the note once per item.
func orderInput(t *testing.T, n, noteLen int) ExprInput {
	t.Helper()
	items := make([]map[string]string, n)
	for i := range items {
		items[i] = map[string]string{"sku": fmt.Sprintf("sku-%03d", i)}
	}
	body, err := json.Marshal(map[string]any{"items": items, "note": strings.Repeat("n", noteLen)})
	require.NoError(t, err)
	return inputOf("shop", "order.created", body)
}

// A transform that repeats a field per item yields the field's size times
// the items': beyond max_output_bytes it is an error naming the limit,
// never a body, and one within it is sent whole.
func TestTransformOutputIsBounded(t *testing.T) {
	t.Parallel()
	const perItem = `{"lines": body.items.map(i, {"sku": i.sku, "note": body.note})}`
	in := orderInput(t, 40, 1000) // about 2 KB in, 40 KB out

	x, err := compileRoute(config.Route{Transform: perItem, MaxOutputBytes: 16 << 10})
	require.NoError(t, err)
	body, _, err := x.apply(&in)
	var limit *OutputLimitError
	require.ErrorAs(t, err, &limit)
	require.Equal(t, 16<<10, limit.Limit)
	require.ErrorContains(t, err, "transform: a value it reads, builds or yields is over max_output_bytes (16384 bytes)")
	require.Nil(t, body)

	x, err = compileRoute(config.Route{Transform: perItem, MaxOutputBytes: 64 << 10})
	require.NoError(t, err)
	body, _, err = x.apply(&in)
	require.NoError(t, err)
	require.Greater(t, len(body), 40*1000)
}

// A value larger than the limit is refused while it is built, even when
// what the transform yields from it is small: evaluation memory is bounded
// by the same limit, not only the body.
func TestTransformMemoryIsBounded(t *testing.T) {
	t.Parallel()
	in := orderInput(t, 20, 1000)
	x, err := compileRoute(config.Route{Transform: `{"n": size(body.items.map(i, body.note + i.sku))}`, MaxOutputBytes: 4 << 10})
	require.NoError(t, err)
	_, _, err = x.apply(&in)
	var limit *OutputLimitError
	require.ErrorAs(t, err, &limit, "a 20 KB list is built on the way to {\"n\": 20}")

	x, err = compileRoute(config.Route{Filter: `body.items.map(i, body.note + i.sku).size() > 0`, MaxOutputBytes: 4 << 10})
	require.NoError(t, err)
	_, err = x.match(&in)
	require.ErrorAs(t, err, &limit, "a filter is bounded the same way")
}

// The bytes decide, not CEL's measure of the value: a string of control
// characters measures its length and encodes to six bytes a character.
func TestTransformOutputIsBoundedInBytes(t *testing.T) {
	t.Parallel()
	body, err := json.Marshal(map[string]string{"s": strings.Repeat("\x01", 100)})
	require.NoError(t, err)
	in := inputOf("shop", "order.created", body)
	x, err := compileRoute(config.Route{Transform: `{"s": body.s}`, MaxOutputBytes: 300})
	require.NoError(t, err)
	out, _, err := x.apply(&in)
	var limit *OutputLimitError
	require.ErrorAs(t, err, &limit, "%d bytes sent", len(out))
}
