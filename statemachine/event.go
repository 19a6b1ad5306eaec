package statemachine

import "time"

// Event is something that happens to a job. The time it happens is
// Machine.Now.
type Event interface{ event() }

// Defined: the job appeared in config, was changed, or was enabled again.
// The machine's Schedule and Policy are the new definition's.
type Defined struct{}

// Redefining: the job's definition is about to change (Defined follows in
// the same transaction). The machine's Schedule and Policy are still the
// old ones, so what fell due under them is settled now, as a tick would.
type Redefining struct{}

// Removed: the job stops for good, with its history kept: it left its
// config or was disabled there, or it can no longer run. Reason says which.
type Removed struct{ Reason Reason }

// Broken: the job can no longer run because its stored definition cannot
// be decoded or its schedule no longer parses; Reason says which. The
// machine has no Schedule (nil) and a zero Policy. It disables the job as
// Removed does, but it cannot list the occurrences due since Cursor
// without a schedule, so none is recorded as skipped: the job's reason is
// their record. It also aborts the invocations already launched, which
// Removed leaves to finish: their outcome could only be recorded by a step
// of the job, and every one fails until the definition changes.
type Broken struct{ Reason Reason }

// Tick: a TickLater task was delivered. Start says the host may call a
// target now: the tick then launches the first occurrence it makes due at
// once itself, in the same step, instead of emitting its StartInvocation,
// and the tick's task stands for that StartInvocation: delivered again, it
// is handled as that task's redelivery would be (see Machine.startHere).
type Tick struct {
	Nonce int64
	Start bool
}

// Triggered: an admin asked for a run now.
type Triggered struct{}

// PauseRequested: an admin paused the job, saying why in Note, until the
// admin resumes it or, if Until is set, until then. A job already PAUSED
// keeps its own note and end, unless Renote: then Note and Until replace
// them, as someone pausing one job anew means. A bulk pause does not
// renote: a job paused for its own reason, until its own time, stays so.
type PauseRequested struct {
	Note   string
	Renote bool
	Until  time.Time
}

// ResumeRequested: an admin resumed the job.
type ResumeRequested struct{}

// AbortRequested: an admin aborted an invocation, or every unfinished one
// when Invocation is "".
type AbortRequested struct{ Invocation string }

// Starting: a StartInvocation task was delivered.
type Starting struct {
	Invocation string
	Attempt    int
	Nonce      int64
}

// Launched: the target accepted the launch and runs it on its own.
// Message is what the target said of it (where it runs), for the record.
type Launched struct {
	Invocation string
	Attempt    int
	Message    string
}

// Ended: the attempt ended, as the target reported it or as the target
// answered when asked by the idempotency key.
type Ended struct {
	Invocation string
	Attempt    int
	Succeeded  bool
	Message    string
}

// NotLaunched: asked by the idempotency key, the target says it never saw
// this launch; launching it now cannot make a second one.
type NotLaunched struct {
	Invocation string
	Attempt    int
}

// OutcomeUnknown: whether the launch happened cannot be known (the process
// that called the target died, and the target cannot tell by key).
type OutcomeUnknown struct {
	Invocation string
	Attempt    int
}

// PollDue: a PollInvocation task was delivered. Nonce is the poll nonce
// the attempt had when the task was scheduled.
type PollDue struct {
	Invocation string
	Attempt    int
	Nonce      int64
}

// BackfillRequested: an admin asked to run the occurrences in [From, To)
// that have no record (see Backfill and Machine.Recorded).
type BackfillRequested struct{ From, To time.Time }

// BackfillCanceled: an admin stopped the backfill under way. The
// occurrences it had not started are simply not started, and get no
// record: a later backfill of the range may still run them.
type BackfillCanceled struct{}

// WatchdogExpired: the watchdog found the job's WatchdogTimerTs passed.
type WatchdogExpired struct{}

func (Defined) event()           {}
func (Redefining) event()        {}
func (Removed) event()           {}
func (Broken) event()            {}
func (Tick) event()              {}
func (Triggered) event()         {}
func (PauseRequested) event()    {}
func (ResumeRequested) event()   {}
func (AbortRequested) event()    {}
func (Starting) event()          {}
func (Launched) event()          {}
func (Ended) event()             {}
func (NotLaunched) event()       {}
func (OutcomeUnknown) event()    {}
func (PollDue) event()           {}
func (WatchdogExpired) event()   {}
func (BackfillRequested) event() {}
func (BackfillCanceled) event()  {}
