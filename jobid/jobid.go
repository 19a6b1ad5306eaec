// Package jobid is a job's full id, "<project>/<job>": the one place it is
// parsed and printed. Job ids travel as strings (in tasks, requests to
// targets, stored records and the API); this package takes them apart
// and puts them together.
package jobid

import (
	"fmt"
	"strings"
)

// ID is a job's full id: its project and its name within the project.
type ID struct {
	Project string
	Job     string
}

// Join returns the full id of the job named job in project.
func Join(project, job string) string { return ID{Project: project, Job: job}.String() }

// Parse reads "<project>/<job>", refusing an id whose project or job is
// empty, or whose job holds a "/".
func Parse(s string) (ID, error) {
	id := Split(s)
	if id.Project == "" || id.Job == "" || strings.Contains(id.Job, "/") {
		return ID{}, fmt.Errorf("job id %q: want <project>/<job>", s)
	}
	return id, nil
}

// Split takes apart an id already known good, such as a stored job's or a
// task's, without judging it: the project is what precedes the first "/",
// the job what follows it ("" without one).
func Split(s string) ID {
	project, job, _ := strings.Cut(s, "/")
	return ID{Project: project, Job: job}
}

// String returns "<project>/<job>".
func (id ID) String() string { return id.Project + "/" + id.Job }
