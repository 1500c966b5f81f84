package main

// The promises of this file's mutations that mutations.go does not name.
const promiseSignIn = "Admin tokens cannot be guessed at network speed"

const signInTests = "^(TestWrongTokensAreSlowedPerAddress|TestSignInTriesComeBack|TestConcurrentGuessesGetTheBurstOnly|TestSignInTableIsBounded)$"

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
		Pkgs: []string{"./internal/destination", "./internal/cli"},
		Run:  "^(TestURLCredentialsAreMaskedInErrors|TestServeMasksDestinationURLPaths)$",
	},
	{
		Name:    "weak-token-served",
		Promise: promiseSignIn,
		File:    "internal/cli/app.go",
		Edits: []Edit{{
			Find:    `if why := admin.WeakToken(ac.Config.Admin.Token); why != "" {`,
			Replace: `if why := admin.WeakToken(ac.Config.Admin.Token); why != "" && false {`,
		}},
		Pkgs: []string{"./internal/cli"},
		Run:  "^TestServeRefusesAWeakAdminToken$",
	},
	{
		Name:    "sign-in-not-slowed",
		Promise: promiseSignIn,
		File:    "internal/admin/signin.go",
		Edits: []Edit{{
			Find:    "\tif b.tries < 1 {",
			Replace: "\tif b.tries < 1 && false {",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  signInTests,
	},
	{
		// A try taken only once the token is found wrong: concurrent
		// guesses all pass the check before any is counted.
		Name:    "sign-in-checked-after-compare",
		Promise: promiseSignIn,
		File:    "internal/admin/signin.go",
		Edits: []Edit{{
			Find:    "\tb.tries--\n\treturn b, 0",
			Replace: "\tgo func() { time.Sleep(50 * time.Millisecond); l.mu.Lock(); b.tries--; l.mu.Unlock() }()\n\treturn b, 0",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  signInTests,
	},
	{
		Name:    "sign-in-right-token-spends",
		Promise: promiseSignIn,
		File:    "internal/admin/auth.go",
		Edits: []Edit{{
			Find:    "\t\ts.signIns.giveBack(tried)",
			Replace: "\t\t_ = tried",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  signInTests,
	},
	{
		Name:    "sign-in-table-unbounded",
		Promise: promiseSignIn,
		File:    "internal/admin/signin.go",
		Edits: []Edit{{
			Find:    "\tif len(l.buckets) >= l.max {\n\t\treturn &l.overflow",
			Replace: "\tif false {\n\t\treturn &l.overflow",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  signInTests,
	},
	{
		Name:    "framing-allowed",
		Promise: promiseCrossSite,
		File:    "internal/admin/server.go",
		Edits: []Edit{{
			Find:    "\ts.app.Use(forbidFraming)\n",
			Replace: "",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestEveryAnswerForbidsFraming$",
	},
}
