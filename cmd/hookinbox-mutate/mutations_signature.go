package main

// signatureMutations are the signature and freshness checks of incoming
// deliveries.
var signatureMutations = []Mutation{
	{
		Name:    "signature-any-accepted",
		Promise: promiseSignature,
		File:    "verify/check.go",
		Edits: []Edit{{
			Find:    "if hmac.Equal(e, r) {",
			Replace: "if len(e) == len(r) {",
		}},
		Pkgs: []string{"./verify"},
		Run:  "^(TestStripeVerify|TestStandardVerify)$",
	},
	{
		Name:    "github-signature-ignored",
		Promise: promiseSignature,
		File:    "verify/github.go",
		Edits: []Edit{{
			Find:    "if github.ValidateSignature(sig, body, secret) == nil {",
			Replace: "if github.ValidateSignature(sig, body, secret) == nil || true {",
		}},
		Pkgs: []string{"./verify"},
		Run:  "^TestGitHubVerify$",
	},
	{
		Name:    "timestamp-past-accepted",
		Promise: promiseSignature,
		File:    "verify/check.go",
		Edits: []Edit{{
			Find:    "case d > tol:",
			Replace: "case false && d > tol:",
		}},
		Pkgs: []string{"./verify"},
		Run:  "^(TestCheckTolerance|TestStripeVerify)$",
	},
	{
		Name:    "timestamp-future-accepted",
		Promise: promiseSignature,
		File:    "verify/check.go",
		Edits: []Edit{{
			Find:    "case d < -tol:",
			Replace: "case false && d < -tol:",
		}},
		Pkgs: []string{"./verify"},
		Run:  "^(TestCheckTolerance|TestStripeVerify)$",
	},
}
