package main

// edgeAdminMutations are the admin listener's edge: what it shows of a
// destination URL, how it answers wrong tokens, and who may frame it.
var edgeAdminMutations = []Mutation{
	{
		Name:    "url-path-shown",
		Promise: promiseSecrets,
		File:    "internal/outbound/outbound.go",
		Edits: []Edit{{
			Find:    "\t\tif seg != \"\" {",
			Replace: "\t\tif seg != \"\" && len(seg) > 24 {",
		}},
		Pkgs: []string{"./handlers/destination", "./internal/cli"},
		Run:  "^(TestURLCredentialsAreMaskedInErrors|TestServeMasksDestinationURLPaths)$",
	},
}
