package engine

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/statemachine"
)

// Outcome is what a person's request of one job did, so that the answer
// can say so, and say when it did nothing.
type Outcome struct {
	// Changed is false for a request that found the job as it asked: a
	// resume of a job not paused, a pause of one paused for the same
	// reason, an abort with nothing unfinished.
	Changed bool
	// Invocation is the occurrence a trigger made.
	Invocation string
	// Waiting tells that a trigger's occurrence waits for the invocation
	// under way to end (overlap queue_one).
	Waiting bool
	// Skipped is why a trigger's occurrence was recorded as skipped at
	// once (overlap skip, or allow at its limit); "" if it runs or waits.
	Skipped statemachine.SkipReason
	// Aborted are the invocations the request ended as ABORTED: an
	// abort's, or those a trigger replaced (overlap replace).
	Aborted []Aborted
	// Renoted is the reason a pause of a paused job replaced; "" for any
	// other request.
	Renoted string
}

// Aborted is an invocation a request aborted, and the attempt it was on.
type Aborted struct {
	Invocation string
	Attempt    int
}

// TriggerJob is Trigger, telling what became of the occurrence under the
// job's overlap policy.
func (e *Engine) TriggerJob(ctx context.Context, jobID string, by access.Identity) (Outcome, error) {
	var o Outcome
	c, err := e.updateOrDisable(ctx, jobID, func(jt *jobTx) error {
		// Recorded before the step, so that the occurrence's record names
		// who asked, whether the step writes it or a later transaction
		// does (an occurrence queued behind a running one). A step that
		// fails writes neither.
		id := statemachine.TriggerID(jt.m.Triggers + 1)
		jt.audit(AuditEntry{By: by, Action: ActionTrigger, Invocation: id})
		before := jt.m.Clone()
		if err := jt.step(statemachine.Triggered{}); err != nil {
			return err
		}
		if got := statemachine.TriggerID(jt.m.Triggers); got != id {
			return fmt.Errorf("job %s: the trigger became occurrence %s, not %s", jobID, got, id)
		}
		o = outcomeOf(jt, before)
		o.Invocation = id
		if p := jt.m.Pending; p != nil && p.ID == id {
			o.Waiting = true
		}
		for _, a := range jt.actions {
			if s, ok := a.(statemachine.RecordSkipped); ok && s.ID == id {
				o.Skipped = s.Reason
			}
		}
		return nil
	})
	if err != nil {
		return Outcome{}, err
	}
	return o, e.carryOut(ctx, jobID, c)
}

// PauseJob is PauseUntil, telling whether it changed the job and, for a job
// paused already, the reason the new one replaced.
func (e *Engine) PauseJob(ctx context.Context, jobID string, by access.Identity, reason string, until time.Time) (Outcome, error) {
	return e.request(ctx, jobID, statemachine.PauseRequested{Note: reason, Renote: true, Until: until}, AuditEntry{By: by, Action: ActionPause, Reason: reason, Until: until})
}

// ResumeJob is Resume, telling whether the job was paused.
func (e *Engine) ResumeJob(ctx context.Context, jobID string, by access.Identity) (Outcome, error) {
	return e.request(ctx, jobID, statemachine.ResumeRequested{}, AuditEntry{By: by, Action: ActionResume})
}

// AbortJob is Abort, telling which invocations it ended, and on which
// attempt: none when nothing was unfinished.
func (e *Engine) AbortJob(ctx context.Context, jobID, invocation string, by access.Identity) (Outcome, error) {
	return e.request(ctx, jobID, statemachine.AbortRequested{Invocation: invocation}, AuditEntry{By: by, Action: ActionAbort, Invocation: invocation})
}

// outcomeOf is what the transaction's steps did to the job, from before
// them: whether they changed it, what they aborted, and the pause reason
// they replaced.
func outcomeOf(jt *jobTx, before statemachine.JobState) Outcome {
	o := Outcome{Changed: len(jt.actions) > 0 || !reflect.DeepEqual(before, jt.m)}
	for _, a := range jt.actions {
		if r, ok := a.(statemachine.Record); ok && r.Status == statemachine.StatusAborted {
			o.Aborted = append(o.Aborted, Aborted{Invocation: r.ID, Attempt: r.Attempt})
		}
	}
	if before.State == statemachine.Paused && jt.m.State == statemachine.Paused && before.Reason.Note != jt.m.Reason.Note {
		o.Renoted = before.Reason.Note
	}
	return o
}
