package cli

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/config"
	"github.com/hookinbox/hookinbox/internal/testdb"
	"github.com/hookinbox/hookinbox/internal/testlog"
	"github.com/hookinbox/hookinbox/verify"
)

// runCmd runs one command with lookup as its environment and returns its
// exit code and output.
func runCmd(lookup map[string]string, args ...string) (int, string) {
	out := &testlog.Buffer{}
	e := env{stdout: out, stderr: out, ext: shipped, lookup: func(k string) (string, bool) {
		v, ok := lookup[k]
		return v, ok
	}}
	return run(context.Background(), args, e), out.String()
}

// init writes a private config whose secrets are its own, loads as written,
// and never overwrites one unless told to.
func TestInitWritesAStarterConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "hookinbox.yaml")

	code, out := runCmd(nil, "init", "--config", path)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "wrote "+path+" (mode 0600)")
	require.Contains(t, out, "serve --config "+path, "it names the next command")
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	first, err := os.ReadFile(path)
	require.NoError(t, err)

	cfg, err := config.Load(path, func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:8080", cfg.Listen, "loopback until exposed on purpose")
	require.Len(t, cfg.Admin.Token, 64)
	committed, err := os.ReadFile(filepath.Join("..", "..", "hookinbox.yaml"))
	require.NoError(t, err)
	var names []string
	for _, s := range cfg.Sources {
		names = append(names, s.Name)
		require.Len(t, s.Secrets, 1, s.Name)
		require.NotContains(t, string(committed), s.Secrets[0], "%s: not a development secret", s.Name)
		_, err := verify.New(s.VerifyConfig())
		require.NoError(t, err, s.Name)
	}
	require.Equal(t, []string{"github", "stripe", "billing"}, names)
	billing, _ := cfg.Source("billing")
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(billing.Secrets[0], "whsec_"))
	require.NoError(t, err)
	require.Len(t, key, 24, "a Standard Webhooks secret of fresh bytes")

	// An existing file is refused and left as it was, whatever its mode.
	require.NoError(t, os.Chmod(path, 0o644))
	code, out = runCmd(nil, "init", "--config", path)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "exists; --force overwrites it")
	unchanged, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(first), string(unchanged))

	code, out = runCmd(nil, "init", "--config", path, "--force")
	require.Equal(t, 0, code, out)
	info, err = os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "--force makes an existing file private too")
	second, err := os.ReadFile(path)
	require.NoError(t, err)
	again, err := config.Load(path, func(string) (string, bool) { return "", false })
	require.NoError(t, err)
	require.NotEqual(t, string(first), string(second))
	require.NotEqual(t, cfg.Admin.Token, again.Admin.Token, "every file gets secrets of its own")
	for i := range cfg.Sources {
		require.NotEqual(t, cfg.Sources[i].Secrets, again.Sources[i].Secrets)
	}
}

// What a new binary's user meets: serve finds no config and names init;
// init's config then serves, takes a signed webhook and opens the admin API
// to its own token.
func TestInitConfigServes(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "hookinbox-init-test-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "hookinbox.yaml")

	for _, cmd := range []string{"serve", "migrate", "send"} {
		code, out := runCmd(nil, cmd, "--config", path, "--source", "github")
		if cmd != "send" {
			code, out = runCmd(nil, cmd, "--config", path)
		}
		require.Equal(t, 1, code, out)
		require.Contains(t, out, "no such file or directory — run \"", cmd)
		require.Contains(t, out, " init\" to write one", cmd)
	}

	code, out := runCmd(nil, "init", "--config", path)
	require.Equal(t, 0, code, out)
	b := &testBundle{configPath: path, listen: freeAddr(t), adminAddr: freeAddr(t), stderr: &testlog.Buffer{}}
	vars := map[string]string{"DATABASE_URL": testdb.URL(t), "HOOKINBOX_LISTEN": b.listen, "HOOKINBOX_ADMIN_LISTEN": b.adminAddr}
	b.env = env{stdout: &testlog.Buffer{}, stderr: b.stderr, ext: shipped, lookup: func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}}
	b.serve(t)
	require.Contains(t, b.stderr.String(), "console=http://"+b.adminAddr+"/console/ sign_in=\"admin.token, at http://"+b.adminAddr+"/login\"",
		"the log names the console and how to get in")

	code, out = b.send(t, "--source", "github", "--event", "issues")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "202 Accepted")
	code, out = b.send(t, "--source", "billing", "--event", "invoice.paid")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "202 Accepted")

	status, _ := b.adminGet(t, "/admin/deliveries", true)
	require.Equal(t, 401, status, "the test's token is not this config's")
	code, out = runCmd(vars, "deliveries", "--config", path)
	require.Equal(t, 0, code, "the admin commands read the token init wrote: %s", out)
	require.Contains(t, out, "issues")
	require.Contains(t, out, "invoice.paid")
}

// serve refuses an admin token anyone could guess, before it touches the
// database, and says which setting to change and how to get a good one.
func TestServeRefusesAWeakAdminToken(t *testing.T) {
	t.Parallel()
	dbURL := testdb.URL(t)
	for _, tok := range []string{"change-me", "short-token-15c", "CHANGE-ME-then-some-more", strings.Repeat("x", 32)} {
		b := setupEnv(t, dbURL, map[string]string{"HOOKINBOX_ADMIN_TOKEN": tok})
		// Bounded: a serve that accepts the token runs until cancelled.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		code := run(ctx, []string{"serve", "--config", b.configPath}, b.env)
		cancel()
		out := b.stderr.String()
		require.Equal(t, 1, code, "%s: %s", tok, out)
		require.Contains(t, out, "admin.token (HOOKINBOX_ADMIN_TOKEN)", tok)
		require.Contains(t, out, " init\" for a config with a generated token", tok)
		require.NotContains(t, out, tok, "the error does not repeat the token")
		require.Equal(t, 1, strings.Count(strings.TrimSpace(out), "\n")+1, "the error is all serve said: nothing started\n%s", out)
	}
	b := setupEnv(t, dbURL, map[string]string{"HOOKINBOX_ADMIN_TOKEN": "a-token-16-chars"})
	b.serve(t)
}
