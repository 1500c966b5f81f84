package destination

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/hookinbox/hookinbox/internal/config"
)

// Every routes: block docs/routes.md shows compiles, recipes included, so a
// copied recipe loads.
func TestDocsRouteRecipesCompile(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "routes.md"))
	require.NoError(t, err)
	blocks := 0
	for _, b := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(raw), -1) {
		if !strings.HasPrefix(b[1], "routes:") {
			continue
		}
		var doc struct {
			Routes []config.Route `yaml:"routes"`
		}
		require.NoError(t, yaml.Unmarshal([]byte(b[1]), &doc), b[1])
		for _, r := range doc.Routes {
			_, err := compileRoute(r)
			require.NoError(t, err, b[1])
			blocks++
		}
	}
	require.GreaterOrEqual(t, blocks, 6, "the page's routes were found")
}
