package main

// The promise of this file's mutations, which mutations.go does not name.
const promiseScopes = "Admin tokens act within their scope"

// scopeTests are the admin package's tests of scopes: the router walk,
// the refusal's answer, the console, sessions, audit, distinct tokens.
const scopeTests = "^(TestEveryRouteChecksItsScope|TestInsufficientScopeAnswer|TestDocsListEveryRoutesScope|TestConsoleWithAReadToken|" +
	"TestSessionFollowsItsToken|TestAuditNamesTheToken|TestTokensMustBeDistinct|TestNearMissTokensFailClosed)$"

// scopeMutations break the scopes of admin tokens: the check, the
// declarations, what a session remembers, the audit line and the checks
// of the configuration.
var scopeMutations = []Mutation{
	{
		Name:    "scope-check-skipped-for-post",
		Promise: promiseScopes,
		File:    "internal/admin/scope.go",
		Edits: []Edit{{
			Find:    "\t\tif p.scope < need {",
			Replace: "\t\tif p.scope < need && c.Method() != fiber.MethodPost {",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  scopeTests,
	},
	{
		Name:    "scope-one-below-enough",
		Promise: promiseScopes,
		File:    "internal/admin/scope.go",
		Edits: []Edit{{
			Find:    "\t\tif p.scope < need {",
			Replace: "\t\tif p.scope+1 < need {",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  scopeTests,
	},
	{
		// A route whose declaration is recorded but whose check is left
		// out of its chain.
		Name:    "route-without-scope-check",
		Promise: promiseScopes,
		File:    "internal/admin/scope.go",
		Edits: []Edit{{
			Find:    "\tif need != ScopePublic {\n",
			Replace: "\tif need == ScopeAdmin {\n",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  scopeTests,
	},
	{
		// A new route registered on Fiber directly, with no scope.
		Name:    "route-registered-undeclared",
		Promise: promiseScopes,
		File:    "internal/admin/api_routes.go",
		Edits: []Edit{{
			Find:    `s.route(post, "/admin/destinations/:name/abandon", ScopeOperate, `,
			Replace: `s.app.Post("/admin/destinations/:name/abandon", `,
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestEveryRouteChecksItsScope$",
	},
	{
		Name:    "riverui-for-operate",
		Promise: promiseScopes,
		File:    "internal/admin/api_routes.go",
		Edits: []Edit{{
			Find:    `s.route(all, "/riverui/*", ScopeAdmin, ui)`,
			Replace: `s.route(all, "/riverui/*", ScopeOperate, ui)`,
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  scopeTests,
	},
	{
		Name:    "admin-token-gets-read",
		Promise: promiseScopes,
		File:    "internal/admin/tokens.go",
		Edits: []Edit{{
			Find:    "Token: c.Token, Scope: ScopeAdmin.String()}",
			Replace: "Token: c.Token, Scope: ScopeRead.String()}",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  scopeTests,
	},
	{
		Name:    "same-token-two-names",
		Promise: promiseScopes,
		File:    "internal/admin/tokens.go",
		Edits: []Edit{{
			Find:    "\t\tcase values[t.Token]:\n",
			Replace: "\t\tcase values[t.Token] && false:\n",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  scopeTests,
	},
	{
		// A session valid whatever scope its token has now: a token's
		// scope lowered in the config would leave its sessions the old one.
		Name:    "session-forgets-scope",
		Promise: promiseScopes,
		File:    "internal/admin/session.go",
		Edits: []Edit{{
			Find:    " || p == nil || Scope(payload[24]) != p.scope {",
			Replace: " || p == nil {",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  scopeTests,
	},
	{
		// Every sign-in at /login a session of the first token
		// (admin.token's when there is one).
		Name:    "session-forgets-token",
		Promise: promiseScopes,
		File:    "internal/admin/login.go",
		Edits: []Edit{{
			Find:    "\ts.startSession(c, p)\n",
			Replace: "\ts.startSession(c, &s.principals[0])\n",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  scopeTests,
	},
	{
		Name:    "console-buttons-for-read",
		Promise: promiseScopes,
		File:    "internal/admin/console.go",
		Edits: []Edit{{
			Find:    "v.Operate, v.RiverUI = p.scope >= ScopeOperate,",
			Replace: "v.Operate, v.RiverUI = p.scope >= ScopeRead,",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  scopeTests,
	},
	{
		Name:    "audit-names-no-token",
		Promise: promiseScopes,
		File:    "internal/admin/audit.go",
		Edits: []Edit{{
			Find:    `slog.String("token", principalOf(c).name)`,
			Replace: `slog.String("token", "")`,
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  scopeTests,
	},
	{
		Name:    "config-same-token-twice",
		Promise: promiseScopes,
		File:    "internal/config/admin_tokens.go",
		Edits: []Edit{{
			Find:    "if other, ok := holders[t.Token]; ok {",
			Replace: "if other, ok := holders[t.Token]; ok && false {",
		}},
		Pkgs: []string{"./internal/config"},
		Run:  "^TestAdminTokenErrorsNameTheKey$",
	},
	{
		Name:    "config-token-spaces-kept",
		Promise: promiseScopes,
		File:    "internal/config/admin_tokens.go",
		Edits: []Edit{{
			Find:    "\tif strings.TrimSpace(token) != token {",
			Replace: "\tif strings.TrimSpace(token) != token && false {",
		}},
		Pkgs: []string{"./internal/config"},
		Run:  "^TestAdminTokenErrorsNameTheKey$",
	},
	{
		Name:    "weak-named-token-served",
		Promise: promiseScopes,
		File:    "internal/cli/app.go",
		Edits: []Edit{{
			Find:    `if why := admin.WeakToken(t.Token); why != "" {`,
			Replace: `if why := admin.WeakToken(t.Token); why != "" && false {`,
		}},
		Pkgs: []string{"./internal/cli"},
		Run:  "^TestServeRefusesAWeakNamedToken$",
	},
}
