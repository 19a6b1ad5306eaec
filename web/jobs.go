package web

import (
	"errors"
	"net/http"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/store"
)

// listJobs lists a project's jobs, a page at a time, by job id.
func (s *server) listJobs(r *http.Request) (int, any, error) {
	project := r.PathValue("project")
	listing := "jobs/" + project
	p, err := page(r, listing)
	if err != nil {
		return 0, nil, err
	}
	jobs, next, err := s.st.Jobs(r.Context(), project, p)
	if err != nil {
		return 0, nil, err
	}
	if len(jobs) == 0 && p.Cursor == "" {
		ok, err := s.projectExists(r.Context(), project)
		if err != nil {
			return 0, nil, err
		}
		if !ok {
			return 0, nil, notFound("project %q not found", project)
		}
	}
	// With grants limited to some jobs, the page holds only those: it may
	// be shorter than the limit, or empty, with a next page all the same.
	grants, err := s.grants.get(r.Context(), project)
	if err != nil {
		return 0, nil, err
	}
	id := identityOf(r)
	out := make([]jobJSON, 0, len(jobs))
	for _, job := range jobs {
		if !s.roles.May(id, access.Read, grants, jobid.Split(job.ID).Job) {
			continue
		}
		v, err := engine.Decode(job)
		if err != nil {
			return 0, nil, err
		}
		last, err := s.lastInvocation(r, job.ID)
		if err != nil {
			return 0, nil, err
		}
		out = append(out, toJob(v, last))
	}
	return http.StatusOK, jobList{Jobs: out, NextCursor: nextCursor(listing, next)}, nil
}

// jobList is a page of a project's jobs.
type jobList struct {
	Jobs       []jobJSON `json:"jobs"`
	NextCursor string    `json:"next_cursor,omitempty"`
}

// lastInvocation is the job's record of its newest occurrence, or nil.
func (s *server) lastInvocation(r *http.Request, jobID string) (*store.InvocationRecord, error) {
	invs, _, err := s.st.Invocations(r.Context(), jobID, store.Page{Limit: 1})
	if err != nil || len(invs) == 0 {
		return nil, err
	}
	return invs[0], nil
}

// getJob returns a job with a page of its invocations, newest first.
func (s *server) getJob(r *http.Request) (int, any, error) {
	jobID := jobIDOf(r)
	listing := "invocations/" + jobID
	p, err := page(r, listing)
	if err != nil {
		return 0, nil, err
	}
	v, err := s.view(r, jobID)
	if err != nil {
		return 0, nil, err
	}
	invs, next, err := s.st.Invocations(r.Context(), jobID, p)
	if err != nil {
		return 0, nil, err
	}
	var last *store.InvocationRecord
	if p.Cursor == "" && len(invs) > 0 {
		last = invs[0]
	} else if last, err = s.lastInvocation(r, jobID); err != nil {
		return 0, nil, err
	}
	d := jobDetail{
		jobJSON:    toJob(v, last),
		Definition: toDefinition(v.Definition),
		Failures:   v.State.Failures,
		Active:     toActive(s.eng, v),
		Backfill:   toBackfill(v.State.Backfill),
		Audit:      toAudit(v.Audit),
		NextCursor: nextCursor(listing, next),

		Revision:      v.Definition.Revision,
		NextFireTimes: nextFireTimes(v),
	}
	d.Invocations = make([]invJSON, 0, len(invs))
	for _, inv := range invs {
		d.Invocations = append(d.Invocations, toInv(inv))
	}
	return http.StatusOK, d, nil
}

// getInvocation returns one invocation with its log.
func (s *server) getInvocation(r *http.Request) (int, any, error) {
	jobID, id := jobIDOf(r), r.PathValue("invocation")
	inv, err := s.st.Invocation(r.Context(), jobID, id)
	if errors.Is(err, store.ErrNotFound) {
		if _, err := s.view(r, jobID); err != nil {
			return 0, nil, err
		}
		return 0, nil, notFound("invocation %q of job %s not found", id, jobID)
	}
	if err != nil {
		return 0, nil, err
	}
	d := invDetail{invJSON: toInv(inv), JobID: jobID, Log: string(inv.Log)}
	d.LogWritten, d.LogTail = s.eng.LogExtent(inv.Log)
	if inv.Status != "SKIPPED" {
		// A definition that cannot be read leaves the revision out; the
		// invocation is shown all the same.
		if def, err := s.eng.InvocationDefinition(r.Context(), inv); err == nil {
			d.Revision = def.Revision
		}
	}
	return http.StatusOK, d, nil
}

// jobIDOf is the id of the job a request's path names.
func jobIDOf(r *http.Request) string {
	return jobid.Join(r.PathValue("project"), r.PathValue("job"))
}

// view reads a job, answering 404 with its id if it does not exist.
func (s *server) view(r *http.Request, jobID string) (engine.View, error) {
	v, err := s.eng.View(r.Context(), jobID)
	if errors.Is(err, store.ErrNotFound) {
		return v, notFound("job %s not found", jobID)
	}
	return v, err
}
