package statemachine

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrRefused wraps the errors of requests the machine turns down (a trigger
// of a disabled job, an abort of an invocation that has ended). A refused
// step changes nothing.
var ErrRefused = errors.New("refused")

// ErrLaunchInProgress is returned for a StartInvocation delivered again
// within Config.LaunchGrace of its launch: the launching process may still
// be calling the target. The step changes nothing; the task should be
// delivered again later.
var ErrLaunchInProgress = errors.New("the launch is in progress")

// Machine runs one step of a job's state machine.
type Machine struct {
	// Inputs: set by the host before Step; Step does not change them.

	JobID    string
	Now      time.Time
	Schedule Schedule
	Policy   Policy
	Config   Config
	// NewNonce returns a nonce never used before by this job (non-zero).
	NewNonce func() int64
	// Recorded reports, for each occurrence id in order, whether the job
	// has an invocation record with it, a skipped one included: a backfill
	// runs no such occurrence. Only a step with a backfill under way asks,
	// in batches that double from one id, so that a host answering each
	// batch with one store read makes few reads where most occurrences are
	// recorded and none to spare where few are. Nil counts as none.
	Recorded func(ids []string) []bool

	// State: the job's state, changed by Step, and the actions Step emitted.

	Job     JobState
	Actions []Action

	// from is where this step's actions start in Actions.
	from int
}

// Step applies an event. It returns an error wrapping ErrRefused, and leaves
// Job and Actions as they were, when the event is a request the job's state
// does not allow; likewise ErrLaunchInProgress for a StartInvocation that
// came again too soon. A stale task (wrong nonce, unknown invocation, finished
// attempt) is not an error: the step does nothing.
func (m *Machine) Step(e Event) error {
	before, n := m.Job.Clone(), len(m.Actions)
	m.from = n
	if err := m.step(e); err != nil {
		m.Job, m.Actions = before, m.Actions[:n]
		return err
	}
	m.advanceBackfill()
	m.settle()
	return nil
}

// step hands the event to its method: one per event, each beside the
// helpers of its area (definition.go, tick.go, request.go, invocation.go,
// backfill.go, watchdog.go). Those that return an error are the ones that
// can refuse; Step undoes what a refused one did.
func (m *Machine) step(e Event) error {
	switch e := e.(type) {
	case Defined:
		m.onDefined()
	case Redefining:
		m.onRedefining()
	case Removed:
		m.onRemoved(e)
	case Broken:
		m.onBroken(e)
	case Tick:
		return m.onTick(e)
	case Triggered:
		return m.onTriggered()
	case PauseRequested:
		return m.onPauseRequested(e)
	case ResumeRequested:
		m.onResumeRequested()
	case AbortRequested:
		return m.onAbortRequested(e)
	case BackfillRequested:
		return m.onBackfillRequested(e)
	case BackfillCanceled:
		return m.onBackfillCanceled()
	case Starting:
		return m.onStarting(e)
	case Launched:
		m.onLaunched(e)
	case PollDue:
		m.onPollDue(e)
	case Ended:
		m.onEnded(e)
	case NotLaunched:
		m.onNotLaunched(e)
	case OutcomeUnknown:
		m.onOutcomeUnknown(e)
	case WatchdogExpired:
		m.onWatchdogExpired()
	default:
		panic(fmt.Sprintf("statemachine: unknown event %T", e))
	}
	return nil
}

// settle derives the state from what the job waits for, and the watchdog
// timer from when each of those tasks is due.
func (m *Machine) settle() {
	j := &m.Job
	if m.ticking() {
		j.State = Scheduled
		for _, inv := range j.Active {
			if launched(inv.Status) {
				j.State = Running
				break
			}
			j.State = Queued
		}
	}
	var t time.Time
	if j.TickNonce != 0 {
		t = j.TickAt.Add(m.Config.TaskGrace)
	}
	for _, inv := range j.Active {
		if t.IsZero() || inv.Deadline.Before(t) {
			t = inv.Deadline
		}
		if inv.Status == StatusRunning && inv.PollNonce != 0 {
			if p := inv.PollAt.Add(m.Config.TaskGrace); p.Before(t) {
				t = p
			}
		}
	}
	j.WatchdogTimerTs = t
}

// ticking reports whether the job's schedule drives it now.
func (m *Machine) ticking() bool {
	return m.Job.State != Disabled && m.Job.State != Paused
}

func (m *Machine) record(inv Invocation, st Status, msg string) {
	m.emit(Record{Occurrence: inv.Occurrence, Attempt: inv.Attempt, Status: st, Message: msg})
}

func (m *Machine) emit(a Action) { m.Actions = append(m.Actions, a) }

// find returns the index in Active of the invocation's given attempt, or -1.
func (m *Machine) find(id string, attempt int) int {
	return slices.IndexFunc(m.Job.Active, func(inv Invocation) bool {
		return inv.ID == id && inv.Attempt == attempt
	})
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
