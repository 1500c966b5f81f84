package main

// edgeCELMutations are the bounds on what a route's expressions may cost
// and send, and on what chat messages may carry from outside.
var edgeCELMutations = []Mutation{
	{
		Name:    "route-memory-unbounded",
		Promise: promiseRouteBounded,
		File:    "handlers/destination/expr.go",
		Edits: []Edit{{
			Find:    "\t\tcel.MemoryLimit(uint32(maxBytes)))",
			Replace: "\t)",
		}},
		Pkgs: []string{"./handlers/destination"},
		Run:  "^TestTransformMemoryIsBounded$",
	},
	{
		Name:    "route-output-bytes-unchecked",
		Promise: promiseRouteBounded,
		File:    "handlers/destination/expr.go",
		Edits: []Edit{{
			Find:    "	if err == nil && len(body) > x.maxOutput {",
			Replace: "	if false {",
		}},
		Pkgs: []string{"./handlers/destination"},
		Run:  "^TestTransformOutputIsBoundedInBytes$",
	},
	{
		Name:    "route-output-unbounded",
		Promise: promiseRouteBounded,
		File:    "handlers/destination/expr.go",
		Edits: []Edit{{
			Find:    "\t\tcel.MemoryLimit(uint32(maxBytes)))",
			Replace: "\t)",
		}, {
			Find:    "	if err == nil && len(body) > x.maxOutput {",
			Replace: "	if false {",
		}},
		Pkgs: []string{"./handlers/destination"},
		Run:  "^(TestTransformOutputIsBounded|TestRouteOverItsOutputLimitIsAFailedSend)$",
	},
	{
		Name:    "delivery-read-runs-transform",
		Promise: promiseRouteBounded,
		File:    "handlers/destination/routes.go",
		Edits: []Edit{{
			Find:    "		case ok && err == nil && transform:",
			Replace: "		case ok && err == nil:",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestReadingADeliveryRunsNoTransform$",
	},
}
