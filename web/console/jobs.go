package console

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// Sizes of the jobs page.
const (
	jobsPerPage = 50
	stripLen    = 20
)

// jobRow is one job on its project's page.
type jobRow struct {
	ID, Name     string
	URL          string
	Explained    string // the schedule in words, or why it cannot be read
	Schedule     string
	Zone         string
	State        string
	Reason       string
	Paused       *engine.AuditEntry // who paused it, when, why
	Next         *moment
	Last         *store.InvocationRecord
	LastAt       *moment
	Failures     int
	Strip        strip
	Unreadable   bool
	TaskFailures int
}

// jobsFilter is what the jobs page shows of a project: its query string.
type jobsFilter struct {
	State   string
	Failing bool
	Query   string
	Page    int    // from 1
	Span    string // the grid's window (gridSpans); "" on the jobs page
}

// query writes the filter as a query string for another page number.
func (f jobsFilter) query(page int) string {
	q := url.Values{}
	if f.State != "" {
		q.Set("state", f.State)
	}
	if f.Failing {
		q.Set("failing", "1")
	}
	if f.Query != "" {
		q.Set("q", f.Query)
	}
	if page > 1 {
		q.Set("page", strconv.Itoa(page))
	}
	if f.Span != "" {
		q.Set("span", f.Span)
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

type jobsPage struct {
	Project    string
	Config     engine.Project
	Filter     jobsFilter
	States     []string
	Rows       []jobRow
	Matching   int // jobs that pass the filter
	Total      int // jobs the viewer may read
	Page, Last int
	Prev, Next string // links to the neighbouring pages; "" at either end
	// MayBulk: the viewer may pause and resume every job of the project.
	MayBulk bool
	Done    string // what the viewer's last bulk action did
	Now     time.Time
}

func (jobsPage) refreshes() {}

// parseJobsFilter reads the jobs page's query (the grid's, with the
// parameters it takes besides); a value it cannot read is refused, not
// ignored.
func parseJobsFilter(r *http.Request, extra ...string) (jobsFilter, error) {
	if err := checkQuery(r, append([]string{"state", "failing", "q", "page", "done"}, extra...)...); err != nil {
		return jobsFilter{}, err
	}
	q := r.URL.Query()
	f := jobsFilter{State: q.Get("state"), Query: strings.TrimSpace(q.Get("q")), Page: 1}
	if f.State != "" && !slices.Contains(statemachine.States, statemachine.State(f.State)) {
		return f, badRequest("state %q: want one of %v", f.State, statemachine.States)
	}
	switch q.Get("failing") {
	case "":
	case "1", "on", "true":
		f.Failing = true
	default:
		return f, badRequest("failing %q: want 1 or nothing", q.Get("failing"))
	}
	if s := q.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return f, badRequest("page %q: want a whole number from 1", s)
		}
		f.Page = n
	}
	return f, nil
}

// jobs is a project's page: a row per job with its schedule, state, next
// and last run and the strip of its last occurrences; filtered by state,
// by failing, and by text in the id; a page of jobsPerPage at a time.
// It reads the project's jobs once (the filters need their states) and the
// strips of only the page's jobs, in one Store.Recent.
func (c *console) jobs(w http.ResponseWriter, r *http.Request, v viewer) error {
	project := r.PathValue("project")
	filter, err := parseJobsFilter(r)
	if err != nil {
		return err
	}
	p, grants, err := c.project(r.Context(), v, project)
	if err != nil {
		return err
	}
	page := jobsPage{Project: project, Config: p, Filter: filter, Now: c.Now(),
		MayBulk: c.Roles.May(v.ID, access.Steer, grants, ""), Done: bulkDoneText[r.URL.Query().Get("done")]}
	for _, st := range statemachine.States {
		page.States = append(page.States, string(st))
	}
	pick, err := c.pickJobs(r, v, project, grants, filter)
	if err != nil {
		return err
	}
	page.Total, page.Matching, page.Page, page.Last, page.Prev, page.Next = pick.total, pick.matching, filter.Page, pick.last, pick.prev, pick.next
	recent, err := c.Store.Recent(r.Context(), pick.ids(), stripLen)
	if err != nil {
		return err
	}
	now := c.Now()
	for _, j := range pick.jobs {
		view, err := engine.Decode(j)
		if err != nil {
			page.Rows = append(page.Rows, jobRow{ID: j.ID, Name: jobName(j.ID), URL: jobURL(j.ID), State: j.State, Unreadable: true, Explained: err.Error()})
			continue
		}
		page.Rows = append(page.Rows, c.row(view, recent[j.ID], now))
	}
	c.renderTitled(w, r, v, http.StatusOK, "jobs", project, []crumb{{Name: project}}, page)
	return nil
}

// picked is one page of a project's jobs that pass a filter.
type picked struct {
	jobs            []*store.JobRecord // the page's, by id
	total, matching int                // the viewer's jobs; those the filter passes
	last            int                // the last page's number
	prev, next      string             // links to the neighbouring pages; "" at either end
}

func (p picked) ids() []string {
	ids := make([]string, 0, len(p.jobs))
	for _, j := range p.jobs {
		ids = append(ids, j.ID)
	}
	return ids
}

// pickJobs reads a project's jobs, the viewer's alone, and returns the
// page of them that the filter asks for: one listing of the project,
// which the filters need (a job's state), no invocation read.
func (c *console) pickJobs(r *http.Request, v viewer, project string, grants []access.RoleGrant, filter jobsFilter) (picked, error) {
	needle := strings.ToLower(filter.Query)
	var out picked
	var matched []*store.JobRecord
	err := c.projectJobs(r.Context(), v, project, grants, func(j *store.JobRecord) error {
		out.total++
		if filter.State != "" && j.State != filter.State {
			return nil
		}
		if needle != "" && !strings.Contains(strings.ToLower(jobName(j.ID)), needle) {
			return nil
		}
		if filter.Failing && !failing(j) {
			return nil
		}
		matched = append(matched, j)
		return nil
	})
	if err != nil {
		return picked{}, err
	}
	out.matching = len(matched)
	out.last = max(1, (len(matched)+jobsPerPage-1)/jobsPerPage)
	if filter.Page > out.last {
		return picked{}, notFound("page %d of project %s: the filter matches %d jobs, %d pages", filter.Page, project, len(matched), out.last)
	}
	if filter.Page > 1 {
		out.prev = filter.query(filter.Page - 1)
		if out.prev == "" {
			out.prev = "?"
		}
	}
	if filter.Page < out.last {
		out.next = filter.query(filter.Page + 1)
	}
	out.jobs = matched[(filter.Page-1)*jobsPerPage : min(len(matched), filter.Page*jobsPerPage)]
	return out, nil
}

// row is a job's row: its view and its newest invocations, newest first.
func (c *console) row(v engine.View, recent []*store.InvocationRecord, now time.Time) jobRow {
	row := jobRow{
		ID: v.Job.ID, Name: jobName(v.Job.ID), URL: jobURL(v.Job.ID),
		Schedule: v.Definition.Schedule, Zone: v.Definition.TimeZone,
		State: string(v.State.State), Failures: v.State.Failures, TaskFailures: v.Health.TaskFailures,
		Strip: drawStrip(v.Job.ID, recent, stripLen),
	}
	if row.Zone == "" {
		row.Zone = "UTC"
	}
	if v.State.State == statemachine.Paused || v.State.State == statemachine.Disabled {
		row.Reason = v.State.Reason.String()
	}
	if v.State.State == statemachine.Paused {
		row.Paused = pausedBy(v.Audit)
	}
	row.Explained = explain(v)
	if next, ok := v.NextFire(); ok {
		row.Next = at(next, now)
	}
	if len(recent) > 0 {
		row.Last = recent[0]
		row.LastAt = at(lastTime(recent[0]), now)
	}
	return row
}

// lastTime is when an invocation last did something: its end, else its
// start, else its occurrence.
func lastTime(inv *store.InvocationRecord) time.Time {
	switch {
	case !inv.Ended.IsZero():
		return inv.Ended
	case !inv.Started.IsZero():
		return inv.Started
	}
	return inv.Occurrence
}

// pausedBy is the newest pause in a job's audit trail (newest first).
func pausedBy(audit []engine.AuditEntry) *engine.AuditEntry {
	for i := range audit {
		if audit[i].Action == engine.ActionPause {
			return &audit[i]
		}
	}
	return nil
}

// explain is a job's schedule in words, or why it cannot be read.
func explain(v engine.View) string {
	s, err := v.Definition.Parse(v.Job.ID)
	if err != nil {
		return "schedule cannot be read: " + err.Error()
	}
	return s.Explain()
}

// jobURL is the path of a job's page.
func jobURL(jobID string) string {
	id := jobid.Split(jobID)
	return "/projects/" + url.PathEscape(id.Project) + "/jobs/" + url.PathEscape(id.Job)
}

// invocationURL is the path of an invocation's page.
func invocationURL(jobID, id string) string {
	return jobURL(jobID) + "/invocations/" + url.PathEscape(id)
}
