package console

import (
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/store"
)

type invocationPage struct {
	Inv      *store.InvocationRecord
	JobID    string
	JobURL   string
	URL      string
	Class    string
	Late     string
	Duration string
	Target   string
	Spec     string
	// Revision is the config revision the invocation ran under; Commit
	// is its commit when that is the one the project runs now, the only
	// commit whose author and subject the record keeps.
	Revision string
	Commit   *engine.Commit
	Log      []logLine
	// FirstLaunch is the first attempt's launch, shown apart from the
	// current attempt's when they differ.
	FirstLaunch time.Time
	Skip        string // what a skip record's reason means
	Ended       bool
	MayAbort    bool
	Occurrence  *moment
	Now         time.Time
}

func (p invocationPage) refreshes() {}

// invocation is an invocation's page: its status, occurrence, attempts and
// their times, lateness and duration, message, the target it ran, and its
// debug log.
func (c *console) invocation(w http.ResponseWriter, r *http.Request, v viewer) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	inv, project, grants, err := c.readInvocation(r, v)
	if err != nil {
		return err
	}
	now := c.Now()
	p, _, err := c.Engine.Project(r.Context(), project)
	if err != nil {
		return err
	}
	page := invocationPage{Inv: inv, JobID: inv.JobID, JobURL: jobURL(inv.JobID), URL: invocationURL(inv.JobID, inv.ID),
		Class: outcome(inv.Status), Log: logLines(inv.Log), Occurrence: at(inv.Occurrence, now), Now: now}
	h := history(inv.JobID, inv)
	page.Late, page.Duration, page.Skip = h.Late, h.Duration, h.Skip
	if first := firstLaunch(inv); !first.Equal(inv.Started) {
		page.FirstLaunch = first
	}
	switch inv.Status {
	case "SUCCEEDED", "FAILED", "ABORTED", "SKIPPED":
		page.Ended = true
	}
	page.MayAbort = !page.Ended && c.Roles.May(v.ID, access.Steer, grants, jobName(inv.JobID))
	if inv.Status != "SKIPPED" {
		if def, err := c.Engine.InvocationDefinition(r.Context(), inv); err == nil {
			page.Target, page.Spec, page.Revision = def.Target, prettyJSON(def.Spec), def.Revision
			if p.Commit != nil && p.Commit.SHA == def.Revision {
				page.Commit = p.Commit
			}
		}
	}
	c.renderTitled(w, r, v, http.StatusOK, "invocation", inv.JobID+" "+inv.ID, []crumb{
		{Name: project, URL: "/projects/" + url.PathEscape(project)},
		{Name: jobName(inv.JobID), URL: jobURL(inv.JobID)},
		{Name: inv.ID},
	}, page)
	return nil
}

// readInvocation reads the invocation a path names, for a viewer who may
// read its job; it returns the job's project and grants with it.
func (c *console) readInvocation(r *http.Request, v viewer) (*store.InvocationRecord, string, []access.RoleGrant, error) {
	project, name, id := r.PathValue("project"), r.PathValue("job"), r.PathValue("invocation")
	_, grants, err := c.jobView(r.Context(), v, project, name)
	if err != nil {
		return nil, "", nil, err
	}
	inv, err := c.Store.Invocation(r.Context(), jobid.Join(project, name), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, "", nil, notFound("invocation %q of job %s not found", id, jobid.Join(project, name))
	}
	return inv, project, grants, err
}

// unsafeName is what a download's file name may not hold.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// logFile serves an invocation's debug log as a text file to save.
func (c *console) logFile(w http.ResponseWriter, r *http.Request, v viewer) error {
	inv, _, _, err := c.readInvocation(r, v)
	if err != nil {
		return err
	}
	name := unsafeName.ReplaceAllString(inv.JobID+"-"+inv.ID, "_") + ".log"
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Write(inv.Log)
	return nil
}
