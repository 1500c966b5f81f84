package config

import (
	"os"
	"regexp"
)

// envRef matches ${NAME} and ${NAME:-default}. A bare $NAME is left alone on
// purpose: secrets may contain '$'.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

// expandEnv replaces ${NAME} with the variable's value (empty when unset) and
// ${NAME:-default} with the value, or default when unset or empty.
func expandEnv(s string, lookup func(string) (string, bool)) string {
	return envRef.ReplaceAllStringFunc(s, func(ref string) string {
		m := envRef.FindStringSubmatch(ref)
		if v, ok := lookup(m[1]); ok && v != "" {
			return v
		}
		return m[2]
	})
}

// LookupEnv is the process environment, the default for Load.
func LookupEnv(name string) (string, bool) { return os.LookupEnv(name) }
