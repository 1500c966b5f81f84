package main

// promiseClientBytes is the row of what a client's bytes may cost.
const promiseClientBytes = "A client's bytes cost what it sent"

// edgeMutations are the listeners' bounds on what a client's bytes cost
// before any check.
var edgeMutations = []Mutation{
	{
		Name:    "ingest-body-reserved",
		Promise: promiseClientBytes,
		File:    "ingest/server.go",
		Edits:   []Edit{{Find: "		StreamRequestBody:            true,", Replace: "		StreamRequestBody:            false,"}},
		Pkgs:    []string{"./ingest"},
		Run:     "^TestAnnouncedBodyReservesNothing$",
	},
	{
		Name:    "admin-body-reserved",
		Promise: promiseClientBytes,
		File:    "internal/admin/server.go",
		Edits:   []Edit{{Find: "		StreamRequestBody:            true,", Replace: "		StreamRequestBody:            false,"}},
		Pkgs:    []string{"./internal/admin"},
		Run:     "^TestAdminAnnouncedBodyReservesNothing$",
	},
	{
		Name:    "body-read-past-limit",
		Promise: promiseClientBytes,
		File:    "internal/httpedge/body.go",
		Edits:   []Edit{{Find: "	if n > int64(max) {", Replace: "	if false && n > int64(max) {"}},
		Pkgs:    []string{"./ingest"},
		Run:     "^TestChunkedBodyOverTheLimitIs413$",
	},
	{
		Name:    "connections-per-address-unbounded",
		Promise: promiseClientBytes,
		File:    "internal/httpedge/conns.go",
		Edits:   []Edit{{Find: "	if l.limits.PerAddress >= 0 && l.per[key] >= l.limits.PerAddress {", Replace: "	if false {"}},
		Pkgs:    []string{"./internal/httpedge", "./ingest"},
		Run:     "^(TestLimitRefusesPastEachBoundAndFreesOnClose|TestAnnouncedBodyReservesNothing)$",
	},
	{
		Name:    "connections-total-unbounded",
		Promise: promiseClientBytes,
		File:    "internal/httpedge/conns.go",
		Edits:   []Edit{{Find: "	if l.limits.Max >= 0 && l.total >= l.limits.Max {", Replace: "	if false {"}},
		Pkgs:    []string{"./internal/httpedge"},
		Run:     "^TestLimitRefusesPastEachBoundAndFreesOnClose$",
	},
	{
		Name:    "connection-place-kept-after-close",
		Promise: promiseClientBytes,
		File:    "internal/httpedge/conns.go",
		Edits:   []Edit{{Find: "	c.once.Do(c.release)", Replace: "	_ = c.once"}},
		Pkgs:    []string{"./internal/httpedge"},
		Run:     "^TestLimitRefusesPastEachBoundAndFreesOnClose$",
	},
}
