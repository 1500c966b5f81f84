package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// Load reads the file at path, expands ${VAR} references with lookup,
// applies env overrides and defaults, and validates. Errors name the key.
func Load(path string, lookup func(string) (string, bool)) (Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	cfg, err := Parse(raw, lookup)
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// LoadClient is Load for a command that only calls a running serve (the
// admin clients, healthcheck, db-url): it checks the addresses such a
// command reads and nothing else, so a source whose secret's variable is
// set only in the server's environment does not stop it.
func LoadClient(path string, lookup func(string) (string, bool)) (Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	cfg, err := parse(raw, lookup)
	if err == nil {
		err = cfg.validateListens()
	}
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// Parse is Load without the file.
func Parse(raw []byte, lookup func(string) (string, bool)) (Config, error) {
	cfg, err := parse(raw, lookup)
	if err != nil {
		return Config{}, err
	}
	if err := cfg.validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// parse reads raw, expands ${VAR} references with lookup and applies env
// overrides and defaults, checking nothing but the YAML and its types.
func parse(raw []byte, lookup func(string) (string, bool)) (Config, error) {
	if lookup == nil {
		lookup = LookupEnv
	}
	// Expand references inside parsed scalars rather than in the raw text, so
	// a secret holding a quote or a colon cannot change the YAML's structure.
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return Config{}, err
	}
	var cfg Config
	if doc.Kind != 0 { // an empty file is an empty config
		expandNode(&doc, lookup)
		expanded, err := yaml.Marshal(&doc)
		if err != nil {
			return Config{}, err
		}
		dec := yaml.NewDecoder(bytes.NewReader(expanded))
		dec.KnownFields(true) // a misspelt key is an error, not a silent default
		if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
			var valueErr *valueError
			if errors.As(err, &valueErr) {
				// The line is of the re-marshalled text: parse that to find the key.
				var out yaml.Node
				if yaml.Unmarshal(expanded, &out) == nil {
					return Config{}, fmt.Errorf("%s: %s", keyAtLine(&out, valueErr.line, valueErr.column, ""), valueErr.msg)
				}
			}
			return Config{}, err
		}
	}
	if v, ok := lookup("HOOKINBOX_LISTEN"); ok && v != "" {
		cfg.Listen, cfg.listenEnv = v, "HOOKINBOX_LISTEN"
	}
	if v, ok := lookup("DATABASE_URL"); ok && v != "" {
		cfg.DatabaseURL = v
	}
	if v, ok := lookup("HOOKINBOX_ADMIN_LISTEN"); ok && v != "" {
		cfg.Admin.Listen, cfg.adminListenEnv = v, "HOOKINBOX_ADMIN_LISTEN"
	}
	if v, ok := lookup("HOOKINBOX_ADMIN_TOKEN"); ok && v != "" {
		cfg.Admin.Token = v
	}
	if v, ok := lookup("HOOKINBOX_ADMIN_HOSTS"); ok && v != "" {
		cfg.Admin.Hosts = nil
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				cfg.Admin.Hosts = append(cfg.Admin.Hosts, h)
			}
		}
	}
	return cfg.WithDefaults(), nil
}

func expandNode(n *yaml.Node, lookup func(string) (string, bool)) {
	if n.Kind == yaml.ScalarNode {
		n.Value = expandEnv(n.Value, lookup)
	}
	for _, c := range n.Content {
		expandNode(c, lookup)
	}
}

// valueError is a scalar that could not be read; Parse names its key.
type valueError struct {
	line, column int
	msg          string
}

func (e *valueError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// keyAtLine returns the dotted path ("sources[1].tolerance") of the value
// at the given line and column of a parsed document.
func keyAtLine(n *yaml.Node, line, column int, path string) string {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if k := keyAtLine(c, line, column, path); k != "" {
				return k
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], n.Content[i+1]
			p := key.Value
			if path != "" {
				p = path + "." + key.Value
			}
			if val.Kind == yaml.ScalarNode && val.Line == line && val.Column == column {
				return p
			}
			if k := keyAtLine(val, line, column, p); k != "" {
				return k
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			if c.Kind == yaml.ScalarNode && c.Line == line && c.Column == column {
				return p
			}
			if k := keyAtLine(c, line, column, p); k != "" {
				return k
			}
		}
	}
	return ""
}
