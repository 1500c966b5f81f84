package main

// streamBoundMutations break what a read token may cost the service
// through the stream and a session: the requests served at once, the ids
// a scan walks, a guess beside a session, and a follower's cursor lent
// across event filters.
var streamBoundMutations = []Mutation{
	{
		// Every waiting follower holds a connection of the pool ingest
		// and the workers share.
		Name:    "stream-served-unbounded",
		Promise: promiseListen,
		File:    "internal/admin/server.go",
		Edits: []Edit{{
			Find:    "streams: make(chan struct{}, maxStreams)",
			Replace: "streams: make(chan struct{}, 1<<20)",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestStreamsServedAtOnceAreBounded$",
	},
	{
		// A follower of a rare source makes one statement walk the whole
		// inbox past its cursor.
		Name:    "stream-scan-unwindowed",
		Promise: promiseListen,
		File:    "internal/admin/stream.go",
		Edits: []Edit{{
			Find:    "\tthrough = min(through, after+streamScanIDs)\n",
			Replace: "\t_ = streamScanIDs\n",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestStreamScansAWindowOfIDs$",
	},
	{
		// A listen of fewer events lends its cursor, past deliveries its
		// filter refused, to a listen of more.
		Name:    "listen-cursor-ignores-events",
		Promise: promiseListen,
		File:    "internal/cli/listen_state.go",
		Edits: []Edit{{
			Find:    "\tif len(evs) > 0 {\n",
			Replace: "\tif false {\n",
		}},
		Pkgs: []string{"./internal/cli"},
		Run:  "^TestListenCursorIsKeptPerSourcesAndEvents$",
	},
	{
		// A session beside a wrong token passes it unslowed, and answers
		// as the session.
		Name:    "session-makes-a-guess-free",
		Promise: promiseScopes,
		File:    "internal/admin/auth.go",
		Edits: []Edit{{
			Find:    "\tcase hasSession && header == \"\":\n",
			Replace: "\tcase hasSession:\n",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestAWrongTokenBesideASessionIsAGuess$",
	},
	{
		// One token's stored answer is replayed to another that sends
		// the same Idempotency-Key.
		Name:    "idempotency-key-shared-across-tokens",
		Promise: promiseScopes,
		File:    "internal/admin/idempotency.go",
		Edits: []Edit{{
			Find:    "ref := &keyRef{scope: principalOf(c).keySpace,",
			Replace: "ref := &keyRef{scope: \"shared\",",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestIdempotencyKeysArePerToken$",
	},
}
