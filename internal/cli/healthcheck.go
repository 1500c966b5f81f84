package cli

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// healthcheckCmd probes a running serve's /healthz (or /readyz with
// --ready): the image has no shell or curl, so Docker's HEALTHCHECK runs
// this instead.
func healthcheckCmd(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("healthcheck", e)
	configFlag(fs, e)
	ready := fs.Bool("ready", false, "probe /readyz (database reachable) instead of /healthz (process up)")
	wait := fs.Duration("wait", 0, "probe once a second until it answers 200, for at most this long; then fail with the last answer")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := loadOptionalConfig(fs, e)
	if err != nil {
		return err
	}
	path := "/healthz"
	if *ready {
		path = "/readyz"
	}
	url := listenURL(cfg.Listen) + path
	deadline := time.Now().Add(*wait)
	for {
		err := probe(ctx, url, path)
		if err == nil || !time.Now().Add(time.Second).Before(deadline) {
			if err != nil && *wait > 0 {
				return fmt.Errorf("not ready after %s: %w", *wait, err)
			}
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
}

// probe asks url once, within 3s.
func probe(ctx context.Context, url, path string) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", path, resp.Status)
	}
	return nil
}
