package riverdb

import "strings"

// River's sqlc statements start with their name; River's job insert and
// its insert notification are recognised by it.
const (
	// JobInsertStatement begins the text of River's job insert, the
	// statement InsertManyTx sends for all its jobs at once.
	JobInsertStatement = "-- name: JobInsertFastMany "
	// InsertNotifyStatement begins the text of River's notification after
	// an insert (pg_notify of the queues that got jobs), the only statement
	// River sends after its job insert within InsertManyTx.
	InsertNotifyStatement = "-- name: PGNotifyMany "
)

// JobInsertKindsArg is the position of the job kinds array among the job
// insert's arguments: a []string with one element per job inserted.
const JobInsertKindsArg = 3

// JobInsertKinds reports whether sql is River's job insert and, if it is,
// the kinds of the jobs it inserts, one per job. It allocates nothing: it
// is called for every statement of an ingest batch's transaction.
func JobInsertKinds(sql string, args []any) (kinds []string, ok bool) {
	if !strings.HasPrefix(sql, JobInsertStatement) || len(args) <= JobInsertKindsArg {
		return nil, false
	}
	kinds, ok = args[JobInsertKindsArg].([]string)
	return kinds, ok
}

// IsInsertNotify reports whether sql is River's notification after an
// insert.
func IsInsertNotify(sql string) bool {
	return strings.HasPrefix(sql, InsertNotifyStatement)
}
