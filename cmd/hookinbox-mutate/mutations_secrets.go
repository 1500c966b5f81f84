package main

// secretMutations are the secrets': never stored, never shown.
var secretMutations = []Mutation{
	{
		Name:    "secret-header-stored",
		Promise: promiseSecrets,
		File:    "ingest/receive.go",
		Edits: []Edit{{
			Find:    "\tsrc.redact(header)\n",
			Replace: "\t_ = src.redact\n",
		}},
		Pkgs: []string{"./ingest"},
		Run:  "^TestSecretHeadersAreNotStored$",
	},
	{
		Name:    "url-credentials-shown",
		Promise: promiseSecrets,
		File:    "internal/outbound/outbound.go",
		Edits: []Edit{{
			Find:    "\tvar ue *url.Error\n\tif !errors.As(err, &ue) {",
			Replace: "\tvar ue *url.Error\n\tif !errors.As(err, &ue) || true {",
		}},
		Pkgs: []string{"./internal/destination", "./handlers"},
		Run:  "^(TestURLCredentialsAreMaskedInErrors|TestCallPostMasksTheURLInErrors)$",
	},
}
