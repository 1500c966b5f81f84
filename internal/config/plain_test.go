package config

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Reading a config file needs nothing but the config: of this module, only
// verify (the providers' vocabulary, itself importing nothing of ours) and
// internal/outbound (URL masking); no database driver, no queue, no web
// framework. Building verifiers, recovery clients and destinations from the
// config happens where the process is assembled (internal/cli).
func TestConfigIsPlainData(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	allowed := map[string]bool{
		"github.com/hookinbox/hookinbox/internal/config":   true,
		"github.com/hookinbox/hookinbox/verify":            true,
		"github.com/hookinbox/hookinbox/internal/outbound": true,
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/hookinbox/hookinbox") {
			require.True(t, allowed[dep], "config imports %s", dep)
		}
		for _, runtime := range []string{"riverqueue", "jackc/pgx", "gofiber"} {
			require.NotContains(t, dep, runtime, "config imports a runtime part")
		}
	}
}
