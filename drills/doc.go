// Package drills breaks hookinbox on purpose and checks that nothing
// acknowledged is lost and nothing is done twice. The drills are tests:
// they build the hookinbox binary, run it as child processes against a real
// PostgreSQL, crash it, cut its database, race replicas, feed it hostile
// input, and end each run with an audit of the inbox, the ledger and a
// stub downstream's effects. See README.md.
package drills
