package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"runtime/debug"

	"github.com/hookinbox/hookinbox/handlers"
	"github.com/hookinbox/hookinbox/internal/config"
)

// processingFingerprint names what decides how this process processes a
// delivery: the binary (its handlers' code), the sources, the registered
// handlers, the destinations and the routes. Two processes with equal
// fingerprints are interchangeable; during a rolling deploy the older
// leaves processing to the newer (jobs.Generation).
func processingFingerprint(cfg config.Config, reg *handlers.Registry) string {
	type source struct{ Name, Provider, ResourceField string }
	var in struct {
		Binary       string
		Sources      []source
		Handlers     []string
		Destinations []string
		Routes       any
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		in.Binary = bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
				in.Binary += " " + s.Value
			}
		}
	}
	for _, s := range cfg.Sources {
		in.Sources = append(in.Sources, source{s.Name, s.Provider, s.ResourceField})
	}
	in.Handlers = reg.Names()
	dests, routes := destinationsAndRoutes(cfg)
	for _, d := range dests {
		in.Destinations = append(in.Destinations, d.Name)
	}
	in.Routes = routes
	raw, _ := json.Marshal(in) // plain data: cannot fail
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}
