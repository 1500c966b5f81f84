package kafkasource_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

// An id or type header that begins with a control character is no name,
// as one with a control character inside is not: the message is stored
// under its offset id and its topic.
func TestAnIDOrTypeThatBeginsWithAControlCharacterIsNoName(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.produceHeaders(t, `{}`, []kgo.RecordHeader{{Key: "event_id", Value: []byte("\x1bevt-1")}, {Key: "type", Value: []byte("\norder.created")}})
	b.consumer(t, "header:event_id")
	require.Eventually(t, func() bool { return b.committed(t) == 1 }, 20*time.Second, 50*time.Millisecond)
	var id, eventType string
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT delivery_id, event_type FROM inbox WHERE source = 'orders'`).
		Scan(&id, &eventType))
	require.Regexp(t, "^"+regexp.QuoteMeta(topic)+`/\d+/0$`, id)
	require.Equal(t, topic, eventType)
}
