package riverdb

import (
	"encoding/json"

	"github.com/riverqueue/river/rivertype"
)

// Snoozes is how often River snoozed job: the "snoozes" count River keeps
// in the job's metadata, which rivertype.JobRow does not expose.
func Snoozes(job *rivertype.JobRow) int {
	var m struct {
		Snoozes int `json:"snoozes"`
	}
	_ = json.Unmarshal(job.Metadata, &m)
	return m.Snoozes
}
