package cli

import (
	"github.com/hookinbox/hookinbox/internal/admin"
)

// openapiCmd prints the admin API's OpenAPI 3.1 document, as GET
// /admin/openapi.json serves it: the reference of the admin commands
// (deliveries, replay, listen) and of any client generated from it. It
// needs no config, server or token.
func openapiCmd(args []string, e env) error {
	fs := newFlagSet("openapi", e)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	doc, err := admin.OpenAPIDocument()
	if err != nil {
		return err
	}
	_, err = e.stdout.Write(append(doc, '\n'))
	return err
}
