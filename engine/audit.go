package engine

import (
	"context"
	"slices"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/statemachine"
)

// Action names a change a person or machine asked of a job.
type Action string

// The actions the audit trail records.
const (
	ActionTrigger Action = "trigger"
	ActionPause   Action = "pause"
	ActionResume  Action = "resume"
	ActionAbort   Action = "abort"
	// ActionBackfill's Reason holds the range, ActionCancelBackfill's none.
	ActionBackfill       Action = "backfill"
	ActionCancelBackfill Action = "cancel_backfill"
)

// AuditEntry is one change asked of a job through the API or the console:
// who, when, what and, for a pause, why.
type AuditEntry struct {
	At     time.Time
	By     access.Identity
	Action Action
	// Invocation is the occurrence a trigger created, or the invocation
	// an abort named ("" for every unfinished one).
	Invocation string
	// Reason is why a pause was asked for, or, for a pause that ended by
	// itself, when it did.
	Reason string
	// Until is when a pause ends by itself; zero for one until a resume.
	Until time.Time
}

// Itself is who the audit trail names for what a job does by itself: the
// end of a pause that was asked to end then.
const Itself access.Identity = "sundial"

// MaxAudit is how many audit entries a job keeps, the newest. They live in
// the job's own stored state, so each is written in the transaction that
// makes the change it records, and bounded so a job steered often does not
// grow without end; the server's log has every one (the API logs each
// change with its identity).
const MaxAudit = 20

// Trigger asks for a run of the job now, under its overlap policy, on
// behalf of by. It returns the id of the occurrence it created.
func (e *Engine) Trigger(ctx context.Context, jobID string, by access.Identity) (string, error) {
	o, err := e.TriggerJob(ctx, jobID, by)
	return o.Invocation, err
}

// Pause stops the job's ticks until Resume, on behalf of by; reason says
// why, for people. A job already paused takes the new reason.
func (e *Engine) Pause(ctx context.Context, jobID string, by access.Identity, reason string) error {
	return e.PauseUntil(ctx, jobID, by, reason, time.Time{})
}

// PauseUntil is Pause with an end: at until the engine resumes the job
// itself, as Resume would, and the trail says so; a zero until is Pause.
// A pause that would end before now is refused (statemachine.ErrRefused).
func (e *Engine) PauseUntil(ctx context.Context, jobID string, by access.Identity, reason string, until time.Time) error {
	_, err := e.PauseJob(ctx, jobID, by, reason, until)
	return err
}

// Resume restarts a paused job's ticks, on behalf of by.
func (e *Engine) Resume(ctx context.Context, jobID string, by access.Identity) error {
	_, err := e.ResumeJob(ctx, jobID, by)
	return err
}

// Abort ends an unfinished invocation as ABORTED, or all of the job's when
// invocation is "", and asks their targets to stop them, on behalf of by.
func (e *Engine) Abort(ctx context.Context, jobID, invocation string, by access.Identity) error {
	_, err := e.AbortJob(ctx, jobID, invocation, by)
	return err
}

// request applies a person's or machine's request to the job and records
// it in the job's audit trail, in the same transaction. A request that
// changes nothing (pausing a paused job) is not recorded. The outcome
// says whether it changed the job, and what it aborted.
func (e *Engine) request(ctx context.Context, jobID string, ev statemachine.Event, entry AuditEntry) (Outcome, error) {
	var o Outcome
	c, err := e.updateOrDisable(ctx, jobID, func(jt *jobTx) error {
		before := jt.m.Clone()
		if err := jt.step(ev); err != nil {
			return err
		}
		o = outcomeOf(jt, before)
		if o.Changed {
			jt.audit(entry)
		}
		return nil
	})
	if err != nil {
		return Outcome{}, err
	}
	return o, e.carryOut(ctx, jobID, c)
}

// requestChanged is request, and reports whether the request changed the
// job (and so was recorded).
func (e *Engine) requestChanged(ctx context.Context, jobID string, ev statemachine.Event, entry AuditEntry) (bool, error) {
	o, err := e.request(ctx, jobID, ev, entry)
	return o.Changed, err
}

// audit appends an entry to the job's trail, keeping the newest MaxAudit.
func (jt *jobTx) audit(entry AuditEntry) {
	entry.At = jt.now
	jt.trail = append(jt.trail, entry)
	if n := len(jt.trail); n > MaxAudit {
		jt.trail = slices.Clone(jt.trail[n-MaxAudit:])
	}
}

// triggerer returns who asked for the manual occurrence id, if the trail
// still holds it.
func (jt *jobTx) triggerer(id string) access.Identity {
	for i := len(jt.trail) - 1; i >= 0; i-- {
		if a := jt.trail[i]; a.Action == ActionTrigger && a.Invocation == id {
			return a.By
		}
	}
	return ""
}
