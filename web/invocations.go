package web

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/store"
)

// listInvocations lists a project's invocations across its jobs, or one
// job's, newest occurrence first: ?status= keeps one status class
// (failed, running, succeeded, skipped), ?since= the occurrences from an
// age ago (24h, 7d) or a time (RFC 3339) on. A page of a project's
// holds only the invocations of the jobs the caller may read: it may be
// shorter than the limit, or empty, with a next page all the same.
func (s *server) listInvocations(r *http.Request) (int, any, error) {
	project, job := r.PathValue("project"), r.PathValue("job")
	q, err := urlQuery(r)
	if err != nil {
		return 0, nil, err
	}
	var f store.InvocationFilter
	if job != "" {
		f.JobID = jobid.Join(project, job)
	}
	status := strings.ToLower(firstOf(q["status"]))
	if status != "" && !slices.Contains(store.StatusClasses, status) {
		return 0, nil, badRequest("status %q: want one of %s", status, strings.Join(store.StatusClasses, ", "))
	}
	f.Class = status
	rawSince := firstOf(q["since"])
	// The listing's name holds the filter, so a cursor pages only the
	// filter that made it.
	listing := "runs/" + project + "\x00" + f.JobID + "\x00" + status + "\x00" + rawSince
	p, err := page(r, listing)
	if err != nil {
		return 0, nil, err
	}
	if p.Cursor != "" {
		// An age counts from the first page's time, which the cursor
		// keeps: pages of "the last 24 hours" are of the same 24 hours.
		at, inner, ok := strings.Cut(p.Cursor, "\x00")
		n, err := strconv.ParseInt(at, 10, 64)
		if !ok || err != nil {
			return 0, nil, badRequest("cursor is not a cursor of this listing")
		}
		if n != 0 {
			f.Since = time.Unix(0, n).UTC()
		}
		p.Cursor = inner
	} else if rawSince != "" {
		if f.Since, err = parseSince(rawSince, s.eng.Now()); err != nil {
			return 0, nil, err
		}
	}
	invs, next, err := s.st.ProjectInvocations(r.Context(), project, f, p)
	if err != nil {
		return 0, nil, err
	}
	if len(invs) == 0 && p.Cursor == "" {
		if err := s.listingExists(r, project, f.JobID); err != nil {
			return 0, nil, err
		}
	}
	grants, err := s.grants.get(r.Context(), project)
	if err != nil {
		return 0, nil, err
	}
	id := identityOf(r)
	out := invList{Invocations: make([]jobInvJSON, 0, len(invs))}
	for _, inv := range invs {
		jobName := jobid.Split(inv.JobID).Job
		if !s.roles.May(id, access.Read, grants, jobName) {
			continue
		}
		out.Invocations = append(out.Invocations, jobInvJSON{JobID: inv.JobID, Job: jobName, invJSON: toInv(inv)})
	}
	if next != "" {
		var since int64
		if !f.Since.IsZero() {
			since = f.Since.UnixNano()
		}
		out.NextCursor = nextCursor(listing, strconv.FormatInt(since, 10)+"\x00"+next)
	}
	return http.StatusOK, out, nil
}

// listingExists answers 404 for a job, or a project, that does not
// exist, which its listing would otherwise find empty.
func (s *server) listingExists(r *http.Request, project, jobID string) error {
	if jobID != "" {
		_, err := s.st.Job(r.Context(), jobID)
		if errors.Is(err, store.ErrNotFound) {
			return notFound("job %s not found", jobID)
		}
		return err
	}
	ok, err := s.projectExists(r.Context(), project)
	if err == nil && !ok {
		err = notFound("project %q not found", project)
	}
	return err
}

// parseSince reads ?since=: an age back from now (a Go duration, 90m or
// 24h, or whole days, 7d) or a time in RFC 3339.
func parseSince(v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	age, err := time.ParseDuration(v)
	if days, ok := strings.CutSuffix(v, "d"); ok && err != nil {
		n, derr := strconv.Atoi(days)
		age, err = time.Duration(n)*24*time.Hour, derr
		if n > 36500 {
			err = errors.New("too many days")
		}
	}
	if err != nil || age <= 0 {
		return time.Time{}, badRequest("since %q: want an age (90m, 24h, 7d) or a time in RFC 3339 (2026-11-01T00:00:00Z)", v)
	}
	return now.Add(-age), nil
}

// firstOf is a query parameter's value; checkQuery has refused one given
// twice.
func firstOf(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// invList is a page of invocations across jobs.
type invList struct {
	Invocations []jobInvJSON `json:"invocations"`
	NextCursor  string       `json:"next_cursor,omitempty"`
}

// jobInvJSON is an invocation record with the job it is of.
type jobInvJSON struct {
	JobID string `json:"job_id"`
	Job   string `json:"job"`
	invJSON
}
