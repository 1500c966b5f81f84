package handlers_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/handlers"
)

func TestDeriveKey(t *testing.T) {
	t.Parallel()
	base := handlers.DeriveKey("stripe", "evt_1", "saga", "fulfill")
	require.Equal(t, base, handlers.DeriveKey("stripe", "evt_1", "saga", "fulfill"), "stable")
	require.Regexp(t, `^hkb_[0-9a-f]{40}$`, base)
	seen := map[string]bool{base: true}
	for _, k := range []string{
		handlers.DeriveKey("stripe2", "evt_1", "saga", "fulfill"),
		handlers.DeriveKey("stripe", "evt_2", "saga", "fulfill"),
		handlers.DeriveKey("stripe", "evt_1", "saga2", "fulfill"),
		handlers.DeriveKey("stripe", "evt_1", "saga", "refund"),
		handlers.DeriveKey("stripe", "evt_1sa", "ga", "fulfill"), // parts do not run together
	} {
		require.False(t, seen[k], "every input changes the key")
		seen[k] = true
	}
}
