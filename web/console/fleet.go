package console

import (
	"cmp"
	"context"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/store"
)

// Bounds of the fleet page. What runs now comes from the jobs' own
// records, which the page reads whole (as the projects page does); what
// failed needs invocations, which it reads only of the jobs that ended
// one within the window, at most fleetMaxJobs of them (those failing now
// first, then the latest to end one), and of each only the newest
// fleetDepth: one Store.Recent, whatever the fleet's size and history.
const (
	fleetWindow  = 24 * time.Hour
	fleetDepth   = 25
	fleetMaxJobs = store.MaxRecentJobs
	fleetRows    = 100 // rows each list shows
)

type fleetPage struct {
	Project  string // the page's filter; "" for every project
	Projects []fleetProject
	Jobs     int // the viewer's jobs
	Running  []runningRow
	// RunningTotal counts the invocations running now, FailedTotal the
	// jobs with a failure in the window.
	RunningTotal, FailedTotal int
	Failed                    []failedRow
	// Ended counts the jobs that ended an invocation in the window,
	// Looked those whose newest occurrences were read.
	Ended, Looked, Depth int
	Now                  time.Time
}

func (fleetPage) refreshes() {}

// fleetProject is a project's line of the fleet: its jobs, the
// invocations running, the jobs that failed in the window.
type fleetProject struct {
	ID                    string
	Jobs, Running, Failed int
}

// runningRow is an invocation running now.
type runningRow struct {
	JobID, JobURL, ID, URL, Phase string
	Attempt                       int
	Occurrence                    time.Time
	Since                         *moment
	since                         time.Time
	Backfill                      bool
}

// failedRow is a job whose newest occurrences hold failures in the
// window.
type failedRow struct {
	JobID, JobURL string
	Failures      int
	// AtLeast: every occurrence read was in the window, so older ones
	// may have failed too.
	AtLeast bool
	Last    *store.InvocationRecord // the newest failure
	LastURL string
	LastAt  *moment
	// InARow is how many failed in a row now; 0 when the job has
	// succeeded since.
	InARow int
}

// fleet is the view across the projects the viewer may read: what runs
// now, and which jobs failed in the last 24 hours, with their newest
// failure; ?project= narrows it to one project.
func (c *console) fleet(w http.ResponseWriter, r *http.Request, v viewer) error {
	if err := checkQuery(r, "project"); err != nil {
		return err
	}
	ctx, now := r.Context(), c.Now()
	page := fleetPage{Project: r.URL.Query().Get("project"), Depth: fleetDepth, Now: now}
	var grants []access.RoleGrant
	if page.Project != "" {
		var err error
		if _, grants, err = c.project(ctx, v, page.Project); err != nil {
			return err
		}
	}
	projects := map[string]*fleetProject{}
	type ended struct {
		id      string
		failing bool
		at      time.Time
	}
	var candidates []ended
	failingNow := map[string]int{}
	scan := func(j *store.JobRecord) error {
		p := projects[j.Project]
		if p == nil {
			p = &fleetProject{ID: j.Project}
			projects[j.Project] = p
		}
		p.Jobs++
		page.Jobs++
		view, err := engine.Decode(j)
		if err != nil {
			return nil // an unreadable job runs nothing; its page says why
		}
		for _, a := range view.State.Active {
			p.Running++
			page.Running = append(page.Running, runningRow{JobID: j.ID, JobURL: jobURL(j.ID), ID: a.ID, URL: invocationURL(j.ID, a.ID),
				Phase: string(c.Engine.Phase(view, a)), Attempt: a.Attempt, Occurrence: a.At, Since: at(a.Since, now), since: a.Since, Backfill: a.Backfill})
		}
		if last := view.State.LastEnded; !last.IsZero() && !last.Before(now.Add(-fleetWindow)) {
			candidates = append(candidates, ended{id: j.ID, failing: view.State.Failures > 0, at: last})
			failingNow[j.ID] = view.State.Failures
		}
		return nil
	}
	var err error
	if page.Project != "" {
		err = c.projectJobs(ctx, v, page.Project, grants, scan)
		if _, ok := projects[page.Project]; !ok {
			projects[page.Project] = &fleetProject{ID: page.Project}
		}
	} else {
		var records map[string]engine.Project
		records, err = c.visibleJobs(ctx, v, scan)
		for id := range records {
			if projects[id] == nil {
				projects[id] = &fleetProject{ID: id}
			}
		}
	}
	if err != nil {
		return err
	}

	// The jobs failing now first, then the latest to end an invocation:
	// if the bound cuts, it cuts the quietest.
	slices.SortFunc(candidates, func(a, b ended) int {
		if a.failing != b.failing {
			if a.failing {
				return -1
			}
			return 1
		}
		return b.at.Compare(a.at)
	})
	page.Ended, page.Looked = len(candidates), min(len(candidates), fleetMaxJobs)
	ids := make([]string, 0, page.Looked)
	for _, e := range candidates[:page.Looked] {
		ids = append(ids, e.id)
	}
	recent, err := c.Store.Recent(ctx, ids, fleetDepth)
	if err != nil {
		return err
	}
	var failed []failedRow
	for _, id := range ids {
		row := failures(id, recent[id], now.Add(-fleetWindow))
		if row.Failures == 0 {
			continue
		}
		row.LastAt, row.InARow = at(row.Last.Ended, now), failingNow[id]
		failed = append(failed, row)
		projects[jobProject(id)].Failed++
	}
	slices.SortFunc(failed, func(a, b failedRow) int {
		return cmp.Or(b.Last.Ended.Compare(a.Last.Ended), cmp.Compare(a.JobID, b.JobID))
	})
	slices.SortFunc(page.Running, func(a, b runningRow) int {
		return cmp.Or(a.since.Compare(b.since), cmp.Compare(a.JobID, b.JobID), cmp.Compare(a.ID, b.ID))
	})
	page.RunningTotal, page.FailedTotal = len(page.Running), len(failed)
	page.Running, page.Failed = page.Running[:min(len(page.Running), fleetRows)], failed[:min(len(failed), fleetRows)]
	for _, id := range slices.Sorted(maps.Keys(projects)) {
		page.Projects = append(page.Projects, *projects[id])
	}
	crumbs := []crumb{{Name: "Fleet"}}
	if page.Project != "" {
		crumbs = []crumb{{Name: "Fleet", URL: "/fleet"}, {Name: page.Project}}
	}
	c.renderTitled(w, r, v, http.StatusOK, "fleet", "Fleet", crumbs, page)
	return nil
}

// failures counts the failures among a job's newest invocations (newest
// first) that ended at or after since.
func failures(jobID string, invs []*store.InvocationRecord, since time.Time) failedRow {
	row := failedRow{JobID: jobID, JobURL: jobURL(jobID)}
	for _, inv := range invs {
		if inv.Status != "FAILED" || inv.Ended.Before(since) {
			continue
		}
		row.Failures++
		if row.Last == nil {
			row.Last, row.LastURL = inv, invocationURL(jobID, inv.ID)
		}
	}
	row.AtLeast = row.Failures > 0 && len(invs) == fleetDepth && !invs[len(invs)-1].Occurrence.Before(since)
	return row
}

// projectJobs calls fn for each job of a project, with the given
// grants, that the viewer may read, in id order.
func (c *console) projectJobs(ctx context.Context, v viewer, project string, grants []access.RoleGrant, fn func(*store.JobRecord) error) error {
	may := c.readable(v, grants)
	return scanJobs(ctx, c.Store, project, func(j *store.JobRecord) error {
		if !may(jobName(j.ID)) {
			return nil
		}
		return fn(j)
	})
}

func jobProject(jobID string) string { return jobid.Split(jobID).Project }
