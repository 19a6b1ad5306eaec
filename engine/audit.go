package engine

import (
	"context"
	"fmt"
	"reflect"
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
	var id string
	c, err := e.updateOrDisable(ctx, jobID, func(jt *jobTx) error {
		// Recorded before the step, so that the occurrence's record names
		// who asked, whether the step writes it or a later transaction
		// does (an occurrence queued behind a running one). A step that
		// fails writes neither.
		id = statemachine.TriggerID(jt.m.Triggers + 1)
		jt.audit(AuditEntry{By: by, Action: ActionTrigger, Invocation: id})
		if err := jt.step(statemachine.Triggered{}); err != nil {
			return err
		}
		if got := statemachine.TriggerID(jt.m.Triggers); got != id {
			return fmt.Errorf("job %s: the trigger became occurrence %s, not %s", jobID, got, id)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return id, e.carryOut(ctx, jobID, c)
}

// Pause stops the job's ticks until Resume, on behalf of by; reason says
// why, for people.
func (e *Engine) Pause(ctx context.Context, jobID string, by access.Identity, reason string) error {
	return e.PauseUntil(ctx, jobID, by, reason, time.Time{})
}

// PauseUntil is Pause with an end: at until the engine resumes the job
// itself, as Resume would, and the trail says so; a zero until is Pause.
// A pause that would end before now is refused (statemachine.ErrRefused).
func (e *Engine) PauseUntil(ctx context.Context, jobID string, by access.Identity, reason string, until time.Time) error {
	return e.request(ctx, jobID, statemachine.PauseRequested{Note: reason, Until: until}, AuditEntry{By: by, Action: ActionPause, Reason: reason, Until: until})
}

// Resume restarts a paused job's ticks, on behalf of by.
func (e *Engine) Resume(ctx context.Context, jobID string, by access.Identity) error {
	return e.request(ctx, jobID, statemachine.ResumeRequested{}, AuditEntry{By: by, Action: ActionResume})
}

// Abort ends an unfinished invocation as ABORTED, or all of the job's when
// invocation is "", and asks their targets to stop them, on behalf of by.
func (e *Engine) Abort(ctx context.Context, jobID, invocation string, by access.Identity) error {
	return e.request(ctx, jobID, statemachine.AbortRequested{Invocation: invocation}, AuditEntry{By: by, Action: ActionAbort, Invocation: invocation})
}

// request applies a person's or machine's request to the job and records
// it in the job's audit trail, in the same transaction. A request that
// changes nothing (pausing a paused job) is not recorded.
func (e *Engine) request(ctx context.Context, jobID string, ev statemachine.Event, entry AuditEntry) error {
	_, err := e.requestChanged(ctx, jobID, ev, entry)
	return err
}

// requestChanged is request, and reports whether the request changed the
// job (and so was recorded).
func (e *Engine) requestChanged(ctx context.Context, jobID string, ev statemachine.Event, entry AuditEntry) (bool, error) {
	changed := false
	c, err := e.updateOrDisable(ctx, jobID, func(jt *jobTx) error {
		before := jt.m.Clone()
		if err := jt.step(ev); err != nil {
			return err
		}
		changed = len(jt.actions) > 0 || !reflect.DeepEqual(before, jt.m)
		if changed {
			jt.audit(entry)
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	return changed, e.carryOut(ctx, jobID, c)
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
