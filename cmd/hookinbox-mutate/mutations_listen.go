package main

// The promise of this file's mutations, as docs/guarantees.md names its
// row.
const promiseListen = "`hookinbox listen` hands on every accepted delivery once, signed with a local secret"

const listenTests = "^(TestListenForwardsReSignedDeliveries|TestListenResumesWhereItStopped|TestForwardHeaders)$"

// listenMutations break `hookinbox listen`: its cursor, the stream's
// horizon under it, and the signature the app checks.
var listenMutations = []Mutation{
	{
		// A listen killed while the app holds a delivery skips it when
		// started again.
		Name:    "listen-cursor-saved-before-forward",
		Promise: promiseListen,
		File:    "internal/cli/listen.go",
		Edits: []Edit{{
			Find:    "\t\t\tres := l.fwd.forward(ctx, it)\n",
			Replace: "\t\t\tif err := l.save(it.ID); err != nil {\n\t\t\t\treturn err\n\t\t\t}\n\t\t\tres := l.fwd.forward(ctx, it)\n",
		}},
		Pkgs: []string{"./internal/cli"},
		Run:  listenTests,
	},
	{
		// The horizon is the sequence's high water without waiting for
		// the inserts in flight: a delivery that took a lower id and
		// commits after a higher one is passed by the cursor for good.
		Name:    "stream-passes-insert-in-flight",
		Promise: promiseListen,
		File:    "internal/inbox/stream.go",
		Edits: []Edit{{
			Find:    "err == nil && len(holders) > 0;",
			Replace: "err == nil && len(holders) > 0 && false;",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestStreamWaitsForAnInsertInFlight$",
	},
	{
		// Signed with the source's production secret, as the config
		// holds it where listen runs beside serve's config.
		Name:    "listen-signs-with-production-secret",
		Promise: promiseListen,
		File:    "internal/cli/listen_forward.go",
		Edits: []Edit{{
			Find:    "\t\t\tvc.HMAC = src.HMAC\n",
			Replace: "\t\t\tvc.HMAC, vc.Secrets = src.HMAC, src.Secrets\n",
		}},
		Pkgs: []string{"./internal/cli"},
		Run:  listenTests,
	},
	{
		// The provider's own signatures, made with the production secret,
		// go on to the app beside the local one.
		Name:    "listen-keeps-provider-signatures",
		Promise: promiseListen,
		File:    "internal/cli/listen_forward.go",
		Edits: []Edit{{
			Find:    ` || strings.Contains(lower, "signature") || strings.Contains(lower, "hmac") {`,
			Replace: ` || lower == "" {`,
		}},
		Pkgs: []string{"./internal/cli"},
		Run:  listenTests,
	},
}
