package cli

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hookinbox/hookinbox/internal/admin"
	"github.com/hookinbox/hookinbox/internal/testlog"
)

// `hookinbox openapi` prints the document GET /admin/openapi.json serves,
// with no config, server or token; it takes no argument.
func TestOpenAPICommand(t *testing.T) {
	t.Parallel()
	out, errs := &testlog.Buffer{}, &testlog.Buffer{}
	e := env{stdout: out, stderr: errs, lookup: func(string) (string, bool) { return "", false }}
	require.Equal(t, 0, run(context.Background(), []string{"openapi"}, e), errs.String())
	want, err := admin.OpenAPIDocument()
	require.NoError(t, err)
	require.Equal(t, string(want)+"\n", out.String())
	var doc struct {
		OpenAPI string         `json:"openapi"`
		Paths   map[string]any `json:"paths"`
	}
	require.NoError(t, json.Unmarshal([]byte(out.String()), &doc))
	require.Equal(t, "3.1.0", doc.OpenAPI)
	require.Contains(t, doc.Paths, "/admin/deliveries/stream", "the route hookinbox listen follows")

	require.Equal(t, 2, run(context.Background(), []string{"openapi", "extra"}, e))
	require.Equal(t, 0, run(context.Background(), []string{"openapi", "-h"}, e))
}
