package config_test

import (
	"fmt"

	"github.com/hookinbox/hookinbox/internal/config"
)

// Parse reads a config from bytes: ${VAR} references are expanded from the
// lookup (the environment, for Load), defaults are filled, and each key's
// value is checked. Errors name the key.
func ExampleParse() {
	env := map[string]string{"GITHUB_WEBHOOK_SECRET": "s3cret"}
	lookup := func(name string) (string, bool) { v, ok := env[name]; return v, ok }

	cfg, err := config.Parse([]byte(`
sources:
  - name: github
    provider: github
    secrets: ["${GITHUB_WEBHOOK_SECRET}"]
`), lookup)
	if err != nil {
		fmt.Println(err)
		return
	}
	src, _ := cfg.Source("github")
	fmt.Println(cfg.Listen, src.Secrets, src.Tolerance.Std())

	_, err = config.Parse([]byte("sources: [{name: github, provider: github, secrets: [\"${UNSET}\"]}]\n"), lookup)
	fmt.Println(err)
	// Output:
	// :8080 [s3cret] 5m0s
	// sources[0] (github).secrets: no non-empty secret (is the ${VAR} it names set?)
}
