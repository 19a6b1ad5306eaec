package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// permanentError is an error that no retry of a job's task can cure: what
// the job needs in order to run is stored in a form this release cannot
// use. The engine disables the job with reason, and drops the task,
// instead of asking for it again for ever. Every other error of a task is
// transient.
type permanentError struct {
	reason statemachine.Reason
	err    error
}

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// permanent types err, which wraps cause, as permanent for kind; the
// reason's note is cause, without the job id that err repeats.
func permanent(kind statemachine.ReasonKind, cause, err error) error {
	return &permanentError{reason: statemachine.Reason{Kind: kind, Note: cause.Error()}, err: err}
}

func asPermanent(err error) *permanentError {
	var pe *permanentError
	if errors.As(err, &pe) {
		return pe
	}
	return nil
}

// newerVersion reports whether a stored state or definition that did not
// decode carries a version newer than current, this release's. That is
// not permanent: during a rolling upgrade, or after a rollback, a process
// of the newer release reads it, and disabling the job here would destroy
// its state.
func newerVersion(encoded []byte, current int) bool {
	var v struct {
		Version int `json:"v"`
	}
	return json.Unmarshal(encoded, &v) == nil && v.Version > current
}

// idle reports whether the job is DISABLED with nothing unfinished: the
// machine then reads neither its schedule nor its policy, whatever the
// event, so a job whose definition cannot be used still takes its stale
// tasks and its admins' requests (which it refuses).
func (jt *jobTx) idle() bool {
	return jt.m.State == statemachine.Disabled && len(jt.m.Active) == 0 && jt.m.Pending == nil
}

// disableBroken disables a job that a permanent error stops. A job whose
// state is unreadable gets a fresh DISABLED state (resetState, with what
// its history says); one whose definition cannot be used is stepped with
// Broken, which needs no schedule. A job found usable again (a Define ran
// meanwhile) is left as it is.
func (e *Engine) disableBroken(ctx context.Context, jobID string, cause *permanentError) error {
	var h history
	if cause.reason.Kind == statemachine.ReasonStateUnreadable {
		var err error
		if h, err = e.history(ctx, jobID); err != nil {
			return err
		}
	}
	c, err := e.update(ctx, jobID, func(jt *jobTx) error {
		switch {
		case jt.stateErr != nil && h.read:
			return jt.resetState(h)
		case jt.stateErr != nil:
			// It became unreadable since cause: the next delivery reads
			// its history.
			return fmt.Errorf("job %s: its stored state became unreadable; disabling it next time", jobID)
		case jt.defErr != nil:
			return jt.run(statemachine.Broken{Reason: asPermanent(jt.defErr).reason})
		}
		return nil
	})
	if err != nil {
		return err
	}
	e.opts.Logger.Warn("disabled a job that cannot run", "job", jobID, "reason", cause.reason.String())
	return e.carryOut(ctx, jobID, c)
}

// history is what a job's invocation records tell of the state they were
// made under.
type history struct {
	read       bool
	unfinished []*store.InvocationRecord
	triggers   int64 // the highest manual trigger's number
}

// history reads the job's invocation records, outside any transaction: a
// transaction cannot list them. Nothing writes them meanwhile, as no
// transaction of the job succeeds while its state is unreadable.
func (e *Engine) history(ctx context.Context, jobID string) (history, error) {
	h := history{read: true}
	for p := (store.Page{Limit: store.MaxLimit}); ; {
		invs, next, err := e.store.Invocations(ctx, jobID, p)
		if err != nil {
			return history{}, fmt.Errorf("job %s: reading its invocations: %w", jobID, err)
		}
		for _, inv := range invs {
			if !statemachine.Status(inv.Status).Ended() {
				h.unfinished = append(h.unfinished, inv)
			}
			if n, ok := statemachine.TriggerNumber(inv.ID); ok && inv.Manual {
				h.triggers = max(h.triggers, n)
			}
		}
		if next == "" {
			return h, nil
		}
		p.Cursor = next
	}
}

// resetState replaces a state that cannot be read with a fresh DISABLED
// one. Its invocations that have not ended are ended ABORTED, those that
// may have launched asked to stop at their target, as Broken does: with
// the state gone nothing could ever record how they end. The trigger count
// comes from the history, so the next manual trigger does not reuse an id.
func (jt *jobTx) resetState(h history) error {
	reason := asPermanent(jt.stateErr).reason
	jt.stateErr = nil
	jt.m = statemachine.JobState{State: statemachine.Disabled, Reason: reason, Cursor: jt.now, Triggers: h.triggers}
	jt.health = Health{}
	for _, old := range h.unfinished {
		inv, err := jt.tx.Invocation(old.ID)
		if err != nil {
			return err
		}
		st := statemachine.Status(inv.Status)
		if st.Ended() {
			continue
		}
		o := statemachine.Occurrence{ID: inv.ID, At: inv.Occurrence, Manual: inv.Manual}
		if st == statemachine.StatusLaunching || st == statemachine.StatusRunning {
			jt.actions = append(jt.actions, statemachine.AbortTarget{Invocation: inv.ID, Attempt: inv.Attempt})
		}
		a := statemachine.Record{Occurrence: o, Attempt: inv.Attempt, Status: statemachine.StatusAborted, Message: "the job was disabled: " + reason.String()}
		if err := jt.write(a); err != nil {
			return err
		}
		jt.actions = append(jt.actions, a)
	}
	return nil
}
