package kafkasource

import (
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestClientLogsAtWarnUnlessTheServiceLogsAtDebug(t *testing.T) {
	t.Parallel()
	at := func(level slog.Level) kgo.LogLevel {
		return newClientLogger(slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: level}))).Level()
	}
	require.Equal(t, kgo.LogLevelWarn, at(slog.LevelInfo))
	require.Equal(t, kgo.LogLevelWarn, at(slog.LevelWarn))
	require.Equal(t, kgo.LogLevelError, at(slog.LevelError))
	require.Equal(t, kgo.LogLevelDebug, at(slog.LevelDebug))
}
