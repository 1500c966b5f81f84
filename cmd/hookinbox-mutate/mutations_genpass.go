package main

// genpassMutations close gaps that generated passes found (see
// docs/guarantees.md, Generated mutations): each was a generated mutant
// that survived its row's tests.
var genpassMutations = []Mutation{
	{
		Name:    "signin-ipv6-per-address",
		Promise: promiseSignIn,
		File:    "internal/httpedge/conns.go",
		// Each IPv6 address counts on its own: a client with a /64 has
		// as many buckets as addresses it chooses to come from.
		Edits: []Edit{{
			Find:    "		bits = 64",
			Replace: "		bits = 128",
		}},
		Pkgs: []string{"./internal/admin"},
		Run:  "^TestSignInCountsIPv6By64$",
	},
	{
		Name:    "key-generation-held-misses-first-id",
		Promise: promiseDuplicate,
		File:    "internal/inbox/sql/key_generation_held.sql",
		// A delivery at a generation's first id does not hold it: the
		// generation is dropped with the delivery and its key.
		Edits: []Edit{{
			Find:    "WHERE id >= @lo AND id < @hi",
			Replace: "WHERE id > @lo AND id < @hi",
		}},
		Pkgs: []string{"./jobs"},
		Run:  "^TestAKeyGenerationHeldByItsFirstIDStays$",
	},
}
