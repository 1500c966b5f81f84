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
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, listenURL(cfg.Listen)+path, nil)
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
