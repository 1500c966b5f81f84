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

func TestDeriveIntentKey(t *testing.T) {
	t.Parallel()
	base := handlers.DeriveIntentKey("github", "notifier", "notify", "acme/app", "v1")
	require.Equal(t, base, handlers.DeriveIntentKey("github", "notifier", "notify", "acme/app", "v1"), "stable")
	require.Regexp(t, `^hkb_[0-9a-f]{40}$`, base)
	seen := map[string]bool{base: true}
	for _, k := range []string{
		handlers.DeriveIntentKey("github2", "notifier", "notify", "acme/app", "v1"),
		handlers.DeriveIntentKey("github", "notifier2", "notify", "acme/app", "v1"),
		handlers.DeriveIntentKey("github", "notifier", "notify2", "acme/app", "v1"),
		handlers.DeriveIntentKey("github", "notifier", "notify", "acme/app", "v2"),
		handlers.DeriveIntentKey("github", "notifier", "notify", "acme/appv", "1"), // parts do not run together
		handlers.DeriveIntentKey("github", "notifier", "notify", "acme/app", "v1", ""),
		handlers.DeriveKey("github", "notifier", "notify", "acme/app"), // never a delivery's key
	} {
		require.False(t, seen[k], "every input changes the key")
		seen[k] = true
	}
	require.Equal(t, "hkb_d1f68769f136fa79e62f15f1db5fadeec94aa70b", handlers.DeriveKey("stripe", "evt_1", "saga", "fulfill"),
		"a delivery's keys never change: downstreams hold them")
}
