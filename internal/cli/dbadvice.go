package cli

import (
	"context"
	"log/slog"
	"net"
	"os"
	"strings"

	"github.com/hookinbox/hookinbox/internal/pgsettings"
	"github.com/hookinbox/hookinbox/internal/procmem"
)

// adviseDatabase logs, once the database answers, each server setting that
// can lose acknowledged deliveries or slows commits under load
// (docs/operations.md, "Checking your server"). A failure to read them is
// only logged: the settings are advice, not a condition to start.
func adviseDatabase(ctx context.Context, db *database, logger *slog.Logger) {
	s, err := pgsettings.Read(ctx, db.pool)
	if err != nil {
		logger.Debug("server settings not checked", "error", err)
		return
	}
	advice := pgsettings.Advise(s, db.embedded != nil)
	if db.embedded != nil || localHost(db.pool.Config().ConnConfig.Host) {
		advice = append(advice, pgsettings.AdviseKernel(os.ReadFile, procmem.MachineMemory())...)
	}
	for _, a := range advice {
		msg := "PostgreSQL setting slows commits under load"
		if a.Durable {
			msg = "PostgreSQL setting can lose acknowledged deliveries"
		}
		logger.Log(ctx, adviceLevel(a, db.embedded != nil), msg, "setting", a.Setting, "value", a.Value, "want", a.Want, "why", a.Why,
			"docs", "docs/operations.md#checking-your-server")
	}
}

// adviceLevel is a warning for what can lose deliveries, and for what
// slows commits on a server of the operator's own; on the embedded one, a
// trial's or a laptop's, whose only such advice is the kernel's
// write-back, a line at info: a first start asks nobody to tune a kernel.
func adviceLevel(a pgsettings.Advice, embedded bool) slog.Level {
	if a.Durable || !embedded {
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// localHost reports whether a connection's host is this machine: a Unix
// socket directory or a loopback address.
func localHost(host string) bool {
	if strings.HasPrefix(host, "/") || host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
