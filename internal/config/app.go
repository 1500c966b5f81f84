package config

import (
	"bytes"
	"fmt"

	"gopkg.in/yaml.v3"
)

// App is the config file's app: section, for a program built on hookinbox
// to configure its own handlers in the same file. hookinbox reads nothing
// in it; ${VAR} references in it are expanded like everywhere else.
type App struct {
	node *yaml.Node
}

// UnmarshalYAML keeps the section as it is.
func (a *App) UnmarshalYAML(n *yaml.Node) error {
	c := *n
	a.node = &c
	return nil
}

// IsZero reports whether the file has no app: section.
func (a App) IsZero() bool { return a.node == nil }

// Decode reads the section into v, as yaml.Unmarshal would (use yaml
// tags on v's fields). Unknown keys are an error, as in the rest of the
// file. Without an app: section v is left as it is.
func (a App) Decode(v any) error {
	if a.node == nil {
		return nil
	}
	raw, err := yaml.Marshal(a.node)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	return nil
}
