package main

// edgeCELMutations are the bounds on what a route's expressions may cost
// and send, and on what chat messages may carry from outside.
var edgeCELMutations = []Mutation{
	{
		Name:    "route-memory-unbounded",
		Promise: promiseRouteBounded,
		File:    "internal/destination/expr.go",
		Edits: []Edit{{
			Find:    "\t\tcel.MemoryLimit(uint32(maxBytes)))",
			Replace: "\t)",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestTransformMemoryIsBounded$",
	},
	{
		Name:    "route-output-bytes-unchecked",
		Promise: promiseRouteBounded,
		File:    "internal/destination/expr.go",
		Edits: []Edit{{
			Find:    "	if err == nil && len(body) > x.maxOutput {",
			Replace: "	if false {",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestTransformOutputIsBoundedInBytes$",
	},
	{
		Name:    "route-output-unbounded",
		Promise: promiseRouteBounded,
		File:    "internal/destination/expr.go",
		Edits: []Edit{{
			Find:    "\t\tcel.MemoryLimit(uint32(maxBytes)))",
			Replace: "\t)",
		}, {
			Find:    "	if err == nil && len(body) > x.maxOutput {",
			Replace: "	if false {",
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^(TestTransformOutputIsBounded|TestRouteOverItsOutputLimitIsAFailedSend)$",
	},
	{
		Name:    "delivery-read-runs-transform",
		Promise: promiseRouteBounded,
		File:    "internal/destination/routes.go",
		Edits: []Edit{{
			Find:    "		case ok && err == nil && transform:",
			Replace: "		case ok && err == nil:",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestReadingADeliveryRunsNoTransform$",
	},
	{
		Name:    "slack-alert-unescaped",
		Promise: promiseChatMarkup,
		File:    "internal/cli/alerts.go",
		Edits: []Edit{{
			Find:    "{\"text\": slackEscape(body.summary)",
			Replace: "{\"text\": (body.summary)",
		}},
		Pkgs: []string{"./internal/cli"},
		Run:  "^TestChatAlertsCarryNoMarkupFromOutside$",
	},
	{
		Name:    "discord-alert-mentions",
		Promise: promiseChatMarkup,
		File:    "internal/cli/alerts.go",
		Edits: []Edit{{
			Find:    `, "allowed_mentions": {"parse": []}}`,
			Replace: `}`,
		}},
		Pkgs: []string{"./internal/cli"},
		Run:  "^TestChatAlertsCarryNoMarkupFromOutside$",
	},
	{
		Name:    "slack-escape-keeps-angle-brackets",
		Promise: promiseChatMarkup,
		File:    "internal/destination/expr_chat.go",
		Edits: []Edit{{
			Find:    `strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")`,
			Replace: `strings.NewReplacer("&", "&amp;")`,
		}},
		Pkgs: []string{"./internal/destination"},
		Run:  "^TestChatEscapes$",
	},
}
