package engine

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// View is a job as an admin sees it: the stored job with its definition and
// its machine's state decoded. It is read outside any transaction, so it
// may be slightly stale; it is for display, never for deciding anything.
type View struct {
	Job        *store.JobRecord
	Definition Definition
	State      statemachine.JobState
	Health     Health
	// Audit is the job's recent changes asked through the API, newest
	// first (at most MaxAudit).
	Audit []AuditEntry
}

// View reads a job and decodes it. It returns store.ErrNotFound for a job
// that does not exist.
func (e *Engine) View(ctx context.Context, jobID string) (View, error) {
	job, err := e.store.Job(ctx, jobID)
	if err != nil {
		return View{}, err
	}
	return Decode(job)
}

// Decode decodes a job read from the store (by a listing, say) into a View.
// It decodes on its own rather than through the engine's schedule cache,
// so a listing of many jobs does not churn the cache the engine runs on.
func Decode(job *store.JobRecord) (View, error) {
	s, err := decodeState(job)
	if err != nil {
		return View{}, err
	}
	v := View{Job: job, State: s.m, Health: s.health, Audit: slices.Clone(s.audit)}
	slices.Reverse(v.Audit)
	if v.Definition, err = decodeDefinition(job.Definition); err != nil {
		if s.m.State == statemachine.Disabled && s.m.Reason.Kind == statemachine.ReasonDefinitionUnreadable {
			// Shown with its reason, which names the error, rather than
			// failing every listing of its project.
			v.Definition = Definition{}
			return v, nil
		}
		return View{}, fmt.Errorf("job %s: stored definition: %w", job.ID, err)
	}
	return v, nil
}

// InvocationDefinition returns the definition an invocation runs or ran
// under: its job's when it was created, whatever the job's is now. A
// record of skipped occurrences names none, and gets an error.
func (e *Engine) InvocationDefinition(ctx context.Context, inv *store.InvocationRecord) (Definition, error) {
	def, err := e.definitionOf(ctx, inv)
	if err != nil {
		return Definition{}, err
	}
	d := *def
	d.Spec = bytes.Clone(d.Spec) // the cached one is shared
	return d, nil
}

// Phase is how an unfinished invocation of the view's job reads: its
// status in the machine, except that an attempt LAUNCHING under a target
// that runs it within the call reads RUNNING, as its record does (the call
// is the run). It goes by the job's definition, as the machine does.
func (e *Engine) Phase(v View, inv statemachine.Invocation) statemachine.Status {
	if inv.Status == statemachine.StatusLaunching && e.runsWithinCall(v.Definition.Target) {
		return statemachine.StatusRunning
	}
	return inv.Status
}

// NextFire is the job's next scheduled occurrence, the one its expected
// tick is for; false when none is planned (PAUSED, DISABLED, a schedule
// with no more fire times, or an interval job whose invocation has not
// ended yet).
func (v View) NextFire() (time.Time, bool) {
	return v.State.NextAt, !v.State.NextAt.IsZero()
}
