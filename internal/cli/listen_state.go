package cli

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// What `hookinbox listen` keeps on this machine, under the user's config
// directory (userConfigDir): its development secret, and a cursor per
// admin API and set of sources, so that a listen started again continues
// where the last one stopped.

// userConfigDir is os.UserConfigDir with the environment read through e,
// so that tests give each run a directory of its own.
func userConfigDir(e env) (string, error) {
	get := func(k string) string { v, _ := e.lookup(k); return v }
	var dir string
	switch runtime.GOOS {
	case "windows":
		dir = get("AppData")
	case "darwin", "ios":
		if home := get("HOME"); home != "" {
			dir = filepath.Join(home, "Library", "Application Support")
		}
	case "plan9":
		if home := get("home"); home != "" {
			dir = filepath.Join(home, "lib")
		}
	default:
		dir = get("XDG_CONFIG_HOME")
		if dir == "" || !filepath.IsAbs(dir) {
			dir = ""
			if home := get("HOME"); home != "" {
				dir = filepath.Join(home, ".config")
			}
		}
	}
	if dir == "" {
		return "", errors.New("no user config directory ($XDG_CONFIG_HOME, $HOME): pass --secret, and --from for where to start")
	}
	return filepath.Join(dir, "hookinbox"), nil
}

// listenSecret returns the development secret stored in dir, making it on
// first use: "whsec_" and 32 random bytes in base64, which Standard
// Webhooks decodes as its key and Stripe and GitHub use as they are, as
// `stripe listen` gives its own. Mode 0600: it signs what the app trusts.
func listenSecret(dir string) (secret, path string, err error) {
	path = filepath.Join(dir, "listen-secret")
	b, err := os.ReadFile(path)
	if err == nil {
		if s := strings.TrimSpace(string(b)); s != "" {
			return s, path, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", path, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return "", path, err
	}
	secret = "whsec_" + base64.StdEncoding.EncodeToString(key)
	if err := writePrivate(path, []byte(secret+"\n")); err != nil {
		return "", path, err
	}
	return secret, path, nil
}

// listenCursor is where a listen of one admin API, set of sources and
// set of events got to: the id of the last delivery it handed on, or the
// stream's cursor past it. The events are part of its key: the stream
// moves a cursor past the deliveries its filter refuses, so a listen of
// fewer events must not lend its cursor to one of more.
type listenCursor struct {
	AdminURL string   `json:"admin_url"`
	Sources  []string `json:"sources"`
	Events   []string `json:"events,omitempty"`
	After    int64    `json:"after"`
	path     string
}

// openCursor finds the saved cursor of adminURL, sources and events; ok
// is false when none was saved.
func openCursor(dir, adminURL string, sources, events []string) (c *listenCursor, ok bool, err error) {
	sorted := slices.Sorted(slices.Values(sources))
	key := adminURL + "\x00" + strings.Join(sorted, "\x00")
	evs := slices.Compact(slices.Sorted(slices.Values(events)))
	if len(evs) > 0 {
		key += "\x01" + strings.Join(evs, "\x00")
	}
	sum := sha256.Sum256([]byte(key))
	c = &listenCursor{AdminURL: adminURL, Sources: sorted, Events: evs,
		path: filepath.Join(dir, "listen-cursors", hex.EncodeToString(sum[:12])+".json")}
	b, err := os.ReadFile(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, false, nil
	}
	if err == nil {
		err = json.Unmarshal(b, c)
	}
	if err != nil {
		return c, false, fmt.Errorf("saved cursor %s: %w (delete it, or pass --from)", c.path, err)
	}
	return c, true, nil
}

// save records after. The file is replaced whole (a rename), so a listen
// killed while saving leaves the old cursor or the new one, never half
// of one. It is not synced to disk: a laptop that sleeps keeps it, and
// one that loses power repeats at most the deliveries since its last
// write-back.
func (c *listenCursor) save(after int64) error {
	c.After = after
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return writePrivate(c.path, b)
}

// writePrivate replaces path with b, mode 0600, making its directory.
func writePrivate(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing is there
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
