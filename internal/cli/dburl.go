package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/hookinbox/hookinbox/internal/pgembed"
)

// dbURLCmd prints the URL of the database this config uses, password
// included, for psql and other tools: database_url when set, else the
// embedded PostgreSQL's under data_dir (whose logged URL is masked).
func dbURLCmd(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("db-url", e)
	configFlag(fs, e)
	force := fs.Bool("force", false, "print even when stdout is a file (which would keep the password)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !*force && !transientOutput(e.stdout) {
		return errors.New("stdout is not a terminal or a pipe, and the URL holds the database password; " +
			"pass --force to write it there anyway")
	}
	cfg, err := loadOptionalConfig(fs, e)
	if err != nil {
		return err
	}
	dbURL := cfg.DatabaseURL
	if dbURL == "" {
		dir, err := filepath.Abs(filepath.Join(cfg.DataDir, "pg"))
		if err != nil {
			return err
		}
		if dbURL, err = pgembed.URLOf(ctx, pgembed.Config{DataDir: dir}); err != nil {
			if errors.Is(err, pgembed.ErrNoCluster) {
				return fmt.Errorf("%w (hookinbox serve creates it on its first start)", err)
			}
			return err
		}
	}
	fmt.Fprintln(e.stderr, "hookinbox db-url: the URL contains the database password: keep it out of files and logs")
	if cfg.DatabaseURL == "" {
		if u, err := url.Parse(dbURL); err == nil {
			conn, err := net.DialTimeout("tcp", u.Host, time.Second)
			if err != nil {
				fmt.Fprintf(e.stderr, "hookinbox db-url: nothing listens on %s: the embedded PostgreSQL runs only while hookinbox serve (or migrate) runs\n", u.Host)
			} else {
				conn.Close()
			}
		}
	}
	_, err = fmt.Fprintln(e.stdout, dbURL)
	return err
}

// transientOutput reports whether w is a terminal (a character device) or
// a pipe, as in psql "$(hookinbox db-url)": places a secret passes through
// rather than stays, as it would in a file.
func transientOutput(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&(os.ModeCharDevice|os.ModeNamedPipe) != 0
}
