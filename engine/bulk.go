package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// Selection picks some of a project's jobs for a bulk pause or resume.
// The zero value picks every job.
type Selection struct {
	// Prefix keeps the jobs whose name (without the project) starts with
	// it.
	Prefix string
	// State keeps the jobs in this state, as last committed; "" keeps any.
	State statemachine.State
	// PausedFor keeps the PAUSED jobs whose pause reason is exactly this,
	// so an incident's resume leaves the jobs paused for other reasons
	// paused.
	PausedFor string
}

// Check refuses a selection that names no state the machine has.
func (s Selection) Check() error {
	if s.State != "" && !slices.Contains(statemachine.States, s.State) {
		return fmt.Errorf("state %q: want one of %v", s.State, statemachine.States)
	}
	return nil
}

func (s Selection) picks(v View) bool {
	switch {
	case s.State != "" && v.State.State != s.State:
		return false
	case s.PausedFor != "" && (v.State.State != statemachine.Paused || v.State.Reason.Note != s.PausedFor):
		return false
	}
	return true
}

// BulkResult is what a bulk pause or resume did, job by job, each list by
// job id.
type BulkResult struct {
	// Changed are the jobs the request paused or resumed.
	Changed []string
	// Unchanged are the jobs it picked that were already so, or whose
	// state refuses the change (a DISABLED job is not paused).
	Unchanged []string
	// Failed are the jobs whose transaction failed, with the error; the
	// others are done all the same.
	Failed map[string]string
	// OtherReasons are, for a selection with PausedFor, the reasons the
	// PAUSED jobs it passed over are paused for, each with how many: what
	// the caller may have meant instead.
	OtherReasons map[string]int
}

// maxBulkFailures stops a bulk request that fails job after job: the
// store is likely down, and going on would only repeat its error.
const maxBulkFailures = 10

// PauseJobs pauses the project's jobs that sel picks, each
// in its own transaction with its own audit entry, on behalf of by, for
// reason, and until until if it is not zero (when the engine resumes each
// by itself). A job already paused is left as it is, with its own reason
// and end, so repeating a request that stopped half-way finishes it and
// changes nothing else. An end that is not after now is refused
// (statemachine.ErrRefused) before any job is read.
func (e *Engine) PauseJobs(ctx context.Context, project string, sel Selection, by access.Identity, reason string, until time.Time) (BulkResult, error) {
	if now := e.opts.Now(); !until.IsZero() && !until.After(now) {
		return BulkResult{}, fmt.Errorf("%w: the pause would end at %s, which is not after now (%s)", statemachine.ErrRefused, until.Format(time.RFC3339), now.Format(time.RFC3339))
	}
	return e.bulk(ctx, project, sel, func(jobID string) (bool, error) {
		return e.requestChanged(ctx, jobID, statemachine.PauseRequested{Note: reason, Until: until}, AuditEntry{By: by, Action: ActionPause, Reason: reason, Until: until})
	})
}

// ResumeJobs resumes the project's PAUSED jobs that sel picks, each in
// its own transaction with its own audit entry, on behalf of by.
// Repeating it changes nothing more.
func (e *Engine) ResumeJobs(ctx context.Context, project string, sel Selection, by access.Identity) (BulkResult, error) {
	return e.bulk(ctx, project, sel, func(jobID string) (bool, error) {
		return e.requestChanged(ctx, jobID, statemachine.ResumeRequested{}, AuditEntry{By: by, Action: ActionResume})
	})
}

// bulk applies change to each job of the project that sel picks, a page
// of the listing at a time. The selection is read outside any transaction
// and may be stale; change runs in the job's own transaction, where the
// machine decides from the job's current state.
func (e *Engine) bulk(ctx context.Context, project string, sel Selection, change func(jobID string) (bool, error)) (BulkResult, error) {
	if err := sel.Check(); err != nil {
		return BulkResult{}, err
	}
	var res BulkResult
	p := store.Page{Limit: store.MaxLimit}
	for {
		jobs, next, err := e.store.Jobs(ctx, project, p)
		if err != nil {
			return res, err
		}
		for _, job := range jobs {
			if id := jobid.Split(job.ID); id.Project != project || !strings.HasPrefix(id.Job, sel.Prefix) {
				continue
			}
			// A job that cannot be decoded is listed as failed, with
			// why, rather than skipped unseen.
			v, err := Decode(job)
			if err == nil && !sel.picks(v) {
				if sel.PausedFor != "" && v.State.State == statemachine.Paused {
					if res.OtherReasons == nil {
						res.OtherReasons = map[string]int{}
					}
					res.OtherReasons[v.State.Reason.Note]++
				}
				continue
			}
			var changed bool
			if err == nil {
				changed, err = change(job.ID)
			}
			switch {
			case errors.Is(err, statemachine.ErrRefused):
				res.Unchanged = append(res.Unchanged, job.ID)
			case err != nil:
				if ctx.Err() != nil {
					return res, ctx.Err()
				}
				if res.Failed == nil {
					res.Failed = map[string]string{}
				}
				res.Failed[job.ID] = err.Error()
				if len(res.Failed) >= maxBulkFailures {
					return res, fmt.Errorf("stopped after %d jobs failed; the last: %w", len(res.Failed), err)
				}
			case changed:
				res.Changed = append(res.Changed, job.ID)
			default:
				res.Unchanged = append(res.Unchanged, job.ID)
			}
		}
		if next == "" {
			return res, nil
		}
		p.Cursor = next
	}
}
