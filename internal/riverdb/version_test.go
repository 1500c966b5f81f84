package riverdb_test

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/internal/riverdb"
)

// riverModules are the River modules whose internals riverdb assumes:
// the client (its statements), the pgx driver (their text and arguments)
// and the job row type.
var riverModules = []string{
	"github.com/riverqueue/river",
	"github.com/riverqueue/river/riverdriver",
	"github.com/riverqueue/river/riverdriver/riverpgxv5",
	"github.com/riverqueue/river/rivertype",
}

// recheck is what an upgrade of River must check before RiverVersion
// moves: each item is one of riverdb's assumptions (doc.go lists where
// each is used). The other tests of this package check them against the
// River this module builds with; they are necessary, not sufficient.
const recheck = `River's internals that hookinbox assumes must be re-checked for this release:
  - River's job insert: InsertManyTx still sends every job in one statement named
    JobInsertFastMany (riverdb.JobInsertStatement), through tx.Query, with the job
    kinds as a []string at argument JobInsertKindsArg; and it sends nothing after it
    but PGNotifyMany (riverdb.InsertNotifyStatement). ingest/commit_carry.go sends
    the batch's COMMIT with that statement.
  - river_job's columns, states and JSON shapes read by internal/riverdb/sql/*.sql and
    the files doc.go lists (processing_complete.sql completes River's jobs as
    JobCompleteTx does: compare with riverpgxv5's JobSetStateIfRunningMany).
  - River's index names: migrations/014 drops river_job_args_index and
    river_job_metadata_index (riverdb.DroppedIndexes); a new River migration may
    recreate or rename them, or add indexes over args or metadata.
  - migrations/017's statistics targets on river_job's columns.
  - the "snoozes" key of a job's metadata (riverdb.Snoozes).
Then set riverdb.RiverVersion.`

// River's version is the one riverdb's assumptions were checked against.
// The test binary's build information lists no dependencies, so go.mod is
// read.
func TestRiverVersionIsTheOneChecked(t *testing.T) {
	t.Parallel()
	f, err := os.Open("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	found := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "require "))
		if len(fields) >= 2 {
			found[fields[0]] = fields[1]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var differ []string
	for _, m := range riverModules {
		v, ok := found[m]
		if !ok {
			t.Fatalf("go.mod does not require %s", m)
		}
		if v != riverdb.RiverVersion {
			differ = append(differ, m+" "+v)
		}
	}
	if len(differ) > 0 {
		t.Fatalf("go.mod requires %s; riverdb.RiverVersion is %s.\n%s", strings.Join(differ, ", "), riverdb.RiverVersion, recheck)
	}
}
