package kafkasource

import (
	"context"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kslog"
)

// clientLogger is franz-go's log through the service's, at warn and above
// unless the service logs at debug: at info, a consumer group's joins,
// syncs and assignments were fifteen lines before a start's "ready", and
// a line a rebalance after, which is the client's business, not the
// operator's.
type clientLogger struct {
	*kslog.Logger
	debug bool
}

func newClientLogger(l *slog.Logger) clientLogger {
	return clientLogger{Logger: kslog.New(l), debug: l.Enabled(context.Background(), slog.LevelDebug)}
}

func (l clientLogger) Level() kgo.LogLevel {
	if l.debug {
		return l.Logger.Level()
	}
	return min(l.Logger.Level(), kgo.LogLevelWarn)
}
