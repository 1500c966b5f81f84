package verify

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSameEvent(t *testing.T) {
	t.Parallel()
	linear := Volatile("linear")
	require.Equal(t, []string{"webhookTimestamp"}, linear)
	require.Nil(t, Volatile("shopify"))

	first := []byte(`{"action":"update","data":{"id":"a"},"webhookTimestamp":1709294400000}`)
	retry := []byte(`{"action":"update","data":{"id":"a"},"webhookTimestamp":1709294460000}`)
	other := []byte(`{"action":"update","data":{"id":"b"},"webhookTimestamp":1709294460000}`)
	extra := []byte(`{"action":"update","data":{"id":"a"},"webhookTimestamp":1709294460000,"x":1}`)

	require.True(t, SameEvent(first, first, nil))
	require.False(t, SameEvent(first, retry, nil), "without volatile fields the bytes decide")
	require.True(t, SameEvent(first, retry, linear), "a retry restamped")
	require.False(t, SameEvent(first, other, linear), "another event under the same id")
	require.False(t, SameEvent(first, extra, linear), "a field more")
	require.False(t, SameEvent(first, []byte(`not json`), linear))
}

func TestBodyTimestamp(t *testing.T) {
	t.Parallel()
	field, unit := BodyTimestamp(Config{Provider: "linear"})
	require.Equal(t, "webhookTimestamp", field)
	require.Equal(t, "ms", unit)
	field, _ = BodyTimestamp(Config{Provider: "slack"}) // a header
	require.Empty(t, field)
	field, unit = BodyTimestamp(Config{Provider: ProviderHMAC, HMAC: &HMACScheme{Timestamp: &Field{JSON: "sent_at", Signed: true}}})
	require.Equal(t, "sent_at", field)
	require.Equal(t, "s", unit)
}
