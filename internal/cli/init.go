package cli

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hookinbox/hookinbox/internal/config"
)

// starterConfig is what init writes. Its secrets are generated per file,
// so unlike the repository's development hookinbox.yaml it holds nothing
// anyone else knows; it still listens on loopback, since a new install is
// usually tried before it is exposed.
const starterConfig = `# hookinbox configuration, written by "hookinbox init". The secrets below
# were generated for this file alone: keep it private (it is mode 0600).
# ${VAR} is read from the environment; ${VAR:-default} falls back to default.

listen: "127.0.0.1:8080"          # env HOOKINBOX_LISTEN; ":8080" takes webhooks from the network
database_url: "${DATABASE_URL}"   # empty: an embedded PostgreSQL under ./.hookinbox/pg
max_body_bytes: 5242880           # larger bodies get 413 and nothing is stored

sources:
  - name: github                  # POST /webhooks/github
    provider: github
    # Paste this into the webhook's "Secret" at GitHub.
    secrets: ["%s"]

  - name: stripe                  # POST /webhooks/stripe
    provider: stripe
    # Stripe generates its endpoint's signing secret: replace this one with
    # the whsec_ value its dashboard shows. Until then it signs "send".
    secrets: ["%s"]
    tolerance: 5m

  - name: billing                 # POST /webhooks/billing (Standard Webhooks)
    provider: standard
    # Give this to the sender; any Standard Webhooks library signs with it.
    secrets: ["%s"]
    tolerance: 5m

# Operators' listener: console (/console/), admin API, River UI (/riverui/)
# and /metrics. Keep it off the public network.
admin:
  listen: "127.0.0.1:8081"        # env HOOKINBOX_ADMIN_LISTEN
  token: "%s"   # Bearer token; in a browser, sign in at /login with it
`

// initCmd writes a starter config with fresh secrets, so a binary that
// finds no config can make one rather than leave the user to copy the
// repository's (whose secrets are public).
func initCmd(args []string, e env) error {
	flags := newFlagSet("init", e)
	configPath := configFlag(flags, e)
	force := flags.Bool("force", false, "overwrite an existing file (its secrets are lost)")
	if err := parseFlags(flags, args); err != nil {
		return err
	}
	content, err := starterContent()
	if err != nil {
		return err
	}
	// O_EXCL decides "exists" in the open itself: no window between a
	// check and the write in which another file could appear.
	mode := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if *force {
		mode = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(*configPath, mode, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists; --force overwrites it, and its secrets with it", *configPath)
	}
	if err != nil {
		return err
	}
	// An existing file keeps its mode through O_TRUNC.
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.WriteString(content)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", *configPath, err)
	}

	next := commandName() + " serve"
	if *configPath != config.DefaultPath {
		next += " --config " + *configPath
	}
	fmt.Fprintf(e.stdout, `wrote %s (mode 0600), with secrets generated for it:
  sources  github, stripe, billing: POST http://127.0.0.1:8080/webhooks/<name>
  admin    the token in admin.token signs in to the console, http://127.0.0.1:8081/console/
next: %s
`, *configPath, next)
	return nil
}

// starterContent fills starterConfig with fresh secrets.
func starterContent() (string, error) {
	github, err := randomBytes(32)
	if err != nil {
		return "", err
	}
	stripe, err := randomBytes(24)
	if err != nil {
		return "", err
	}
	standard, err := randomBytes(24)
	if err != nil {
		return "", err
	}
	token, err := randomBytes(32)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf(starterConfig,
		hex.EncodeToString(github),
		// Stripe keys its HMAC with the whole string, so any whsec_ text
		// works; alphanumeric, as Stripe's own are.
		"whsec_"+hex.EncodeToString(stripe),
		// Standard Webhooks keys with the base64-decoded part.
		"whsec_"+base64.StdEncoding.EncodeToString(standard),
		hex.EncodeToString(token),
	), nil
}

func randomBytes(n int) ([]byte, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return b, nil
}

// commandName is how the user ran this binary, for the next command to
// type: "./myinbox" stays as typed, a name found on PATH stays a name.
func commandName() string {
	name := os.Args[0]
	if !strings.ContainsRune(name, filepath.Separator) || strings.HasSuffix(name, ".test") {
		return filepath.Base(name)
	}
	return name
}
