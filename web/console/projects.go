package console

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// projectRow is one project on the projects page.
type projectRow struct {
	ID     string
	Config engine.Project
	// Counts holds the viewer's readable jobs by state, in
	// statemachine.States order.
	Counts  []stateCount
	Total   int
	Failing int // jobs whose last invocation failed
}

type stateCount struct {
	State string
	N     int
}

type projectsPage struct {
	Projects []projectRow
	// Attention lists the jobs whose last invocation failed, or whose
	// tasks keep failing, most failures first: what the on-call engineer
	// opens the console for.
	Attention      []attention
	AttentionTotal int
	Now            time.Time
}

// attention is a job that needs a look.
type attention struct {
	ID, URL      string
	Failures     int // invocations failed in a row
	TaskFailures int // deliveries of its tasks failed in a row
}

// maxAttention bounds the projects page's list of jobs to look at.
const maxAttention = 20

func (projectsPage) refreshes() {}

// projects is the landing page: every project the viewer sees, its config
// revision (a red mark when the newest is refused), its jobs by state and
// how many of them are failing.
func (c *console) projects(w http.ResponseWriter, r *http.Request, v viewer) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	rows, look, err := c.projectRows(r.Context(), v)
	if err != nil {
		return err
	}
	slices.SortFunc(look, func(a, b attention) int {
		if d := (b.Failures + b.TaskFailures) - (a.Failures + a.TaskFailures); d != 0 {
			return d
		}
		return strings.Compare(a.ID, b.ID)
	})
	page := projectsPage{Projects: rows, AttentionTotal: len(look), Attention: look[:min(len(look), maxAttention)], Now: c.Now()}
	c.renderTitled(w, r, v, http.StatusOK, "projects", "Projects", nil, page)
	return nil
}

// projectRows reads every project's record, and the jobs of the projects
// the viewer sees (visibleJobs): the counts are the viewer's, so a job it
// may not read is not counted. It returns the readable jobs that need a
// look too.
func (c *console) projectRows(ctx context.Context, v viewer) ([]projectRow, []attention, error) {
	var look []attention
	type tally struct {
		states  map[string]int
		failing int
	}
	tallies := map[string]*tally{}
	records, err := c.visibleJobs(ctx, v, func(j *store.JobRecord) error {
		t := tallies[j.Project]
		if t == nil {
			t = &tally{states: map[string]int{}}
			tallies[j.Project] = t
		}
		t.states[j.State]++
		view, err := engine.Decode(j)
		if err != nil {
			return nil // an unreadable job is DISABLED with its reason, counted as such
		}
		if view.State.Failures > 0 {
			t.failing++
		}
		if view.State.Failures > 0 || view.Health.TaskFailures > 0 {
			look = append(look, attention{ID: j.ID, URL: jobURL(j.ID), Failures: view.State.Failures, TaskFailures: view.Health.TaskFailures})
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	rows := make([]projectRow, 0, len(records))
	for _, id := range slices.Sorted(maps.Keys(records)) {
		t := tallies[id]
		if t == nil {
			t = &tally{}
		}
		row := projectRow{ID: id, Config: records[id], Failing: t.failing}
		for _, st := range statemachine.States {
			row.Counts = append(row.Counts, stateCount{State: string(st), N: t.states[string(st)]})
			row.Total += t.states[string(st)]
		}
		rows = append(rows, row)
	}
	return rows, look, nil
}

// visibleJobs calls fn for each job the viewer may read, project by
// project, and returns the records of the projects it sees (a project
// with jobs and no record yet, which only administrators see, with a zero
// record).
//
// Only a viewer who sees projects with no grants (an administrator) reads
// every job, which is what it sees; anyone else reads only the projects it
// sees, so an anonymous caller who sees none costs a read of the projects'
// records and no more, however many jobs the store holds.
func (c *console) visibleJobs(ctx context.Context, v viewer, fn func(*store.JobRecord) error) (map[string]engine.Project, error) {
	records, err := c.Engine.Projects(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]engine.Project{}
	readable := map[string]func(job string) bool{}
	for id, p := range records {
		if c.Roles.Sees(v.ID, p.Grants) {
			seen[id], readable[id] = p, c.readable(v, p.Grants)
		}
	}
	visit := func(j *store.JobRecord) error {
		may, ok := readable[j.Project]
		if !ok {
			if _, known := records[j.Project]; known {
				return nil // a project the viewer does not see
			}
			// Jobs with no project record (none applied yet): only
			// administrators see them, as the API decides for no grants.
			if !c.Roles.Sees(v.ID, nil) {
				return nil
			}
			may = func(string) bool { return true }
			seen[j.Project], readable[j.Project] = engine.Project{}, may
		}
		if !may(jobName(j.ID)) {
			return nil
		}
		return fn(j)
	}
	if c.Roles.Sees(v.ID, nil) {
		err = scanJobs(ctx, c.Store, "", visit)
	} else {
		for _, id := range slices.Sorted(maps.Keys(readable)) {
			if err = scanJobs(ctx, c.Store, id, visit); err != nil {
				break
			}
		}
	}
	return seen, err
}

// readable returns whether the viewer may read a job of a project with
// the given grants, deciding once for a viewer who may read all of it.
func (c *console) readable(v viewer, grants []access.RoleGrant) func(job string) bool {
	jobs, all := c.Roles.ReadableJobs(v.ID, grants)
	if all {
		return func(string) bool { return true }
	}
	return func(job string) bool { return slices.Contains(jobs, job) }
}

// failing reports whether a job's last invocation failed. It reads the
// job's state, which counts failures in a row: one job decoded, no
// invocation read.
func failing(j *store.JobRecord) bool {
	v, err := engine.Decode(j)
	return err == nil && v.State.Failures > 0
}

// scanJobs calls fn for every job of a project ("" for all), in id order,
// a page of the store's largest at a time.
func scanJobs(ctx context.Context, st store.Store, project string, fn func(*store.JobRecord) error) error {
	for p := (store.Page{Limit: store.MaxLimit}); ; {
		jobs, next, err := st.Jobs(ctx, project, p)
		if err != nil {
			return err
		}
		for _, j := range jobs {
			if err := fn(j); err != nil {
				return err
			}
		}
		if next == "" {
			return nil
		}
		p.Cursor = next
	}
}

func jobName(jobID string) string { return jobid.Split(jobID).Job }

// configsPage lists each project's config status.
type configsPage struct {
	Projects []engine.Project
	Now      time.Time
}

func (configsPage) refreshes() {}

// configs shows, per project the viewer sees, the file its config is read
// from, the revision running and when it was loaded, how many jobs it
// lists, and the error of a refused revision with its file and line.
func (c *console) configs(w http.ResponseWriter, r *http.Request, v viewer) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	records, err := c.Engine.Projects(r.Context())
	if err != nil {
		return err
	}
	page := configsPage{Now: c.Now()}
	for _, id := range slices.Sorted(maps.Keys(records)) {
		p := records[id]
		if !c.Roles.Sees(v.ID, p.Grants) {
			continue
		}
		if jobs, all := c.Roles.ReadableJobs(v.ID, p.Grants); !all && p.Changes != nil {
			p.Changes = onlyJobs(p.Changes, jobs)
		}
		page.Projects = append(page.Projects, p)
	}
	c.renderTitled(w, r, v, http.StatusOK, "configs", "Configs", []crumb{{Name: "Configs"}}, page)
	return nil
}

// onlyJobs is what a viewer limited to some jobs sees of an import's
// changes: the changes of those jobs, counted alone, so that no other
// job's name or number shows.
func onlyJobs(ch *engine.Changes, jobs []string) *engine.Changes {
	keep := func(names []string) []string {
		return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !slices.Contains(jobs, n) })
	}
	out := &engine.Changes{Added: keep(ch.Added), Changed: keep(ch.Changed), Removed: keep(ch.Removed)}
	out.AddedCount, out.ChangedCount, out.RemovedCount = len(out.Added), len(out.Changed), len(out.Removed)
	return out
}
