package statemachine

import "time"

// Action is something the host must do for a step. TickLater,
// StartInvocation, Record and RecordSkipped are writes of the step's
// transaction; Launch, Resolve and AbortTarget are calls to the target,
// made only after that transaction committed.
type Action interface{ action() }

// TickLater schedules a TickLater task.
type TickLater struct {
	At    time.Time
	Nonce int64
}

// StartInvocation schedules a StartInvocation task.
type StartInvocation struct {
	Invocation string
	Attempt    int
	Nonce      int64
	At         time.Time
}

// Status is the status of an invocation record.
type Status string

// The statuses an invocation record goes through.
const (
	StatusQueued    Status = "QUEUED"
	StatusLaunching Status = "LAUNCHING"
	StatusRunning   Status = "RUNNING"
	StatusRetrying  Status = "RETRYING"
	StatusSucceeded Status = "SUCCEEDED"
	StatusFailed    Status = "FAILED"
	StatusAborted   Status = "ABORTED"
	StatusSkipped   Status = "SKIPPED"
)

// Ended reports whether an invocation with this status is over.
func (s Status) Ended() bool {
	return s == StatusSucceeded || s == StatusFailed || s == StatusAborted || s == StatusSkipped
}

// Record writes an invocation's record: created by its first Record
// (QUEUED), updated by the next ones.
type Record struct {
	Occurrence
	Attempt int
	Status  Status
	Message string
}

// SkipReason says why an occurrence did not become an invocation.
type SkipReason string

// The reasons an occurrence is skipped.
const (
	// SkipOverrun: it came while another invocation had not ended.
	SkipOverrun SkipReason = "overrun"
	// SkipMissed: it was found due later than the catch-up window allows
	// (downtime, or a tick that came too late).
	SkipMissed SkipReason = "missed"
	// SkipSuperseded: it was missed and a later missed occurrence ran in
	// its place (catch-up runs only the latest one).
	SkipSuperseded SkipReason = "superseded"
	// SkipPaused: it fell while the job was paused.
	SkipPaused SkipReason = "paused"
	// SkipDisabled: it was due or waiting (queue_one) when the job was
	// disabled.
	SkipDisabled SkipReason = "disabled"
	// SkipDSTGap: its wall-clock time did not exist (a spring-forward gap)
	// and the job's DST policy is gap: skip. First is when the gap ended.
	SkipDSTGap SkipReason = "dst_gap"
	// SkipCalendar: its date is a day of a calendar the job skips, or of
	// none of those it runs only on; the record's Note says which.
	SkipCalendar SkipReason = "calendar"
)

// SkipReasons lists every reason, for metrics and documentation.
var SkipReasons = []SkipReason{SkipOverrun, SkipMissed, SkipSuperseded, SkipPaused, SkipDisabled, SkipDSTGap, SkipCalendar}

// RecordSkipped records occurrences that will never run: Count of them, of
// one reason, from First to Last. ID is the first one's invocation id.
type RecordSkipped struct {
	ID          string
	First, Last time.Time
	Count       int
	Manual      bool
	Reason      SkipReason
	// Note says more of the reason, for people: for SkipCalendar, which
	// calendar ("on holidays").
	Note string
}

// Launch calls the target for an attempt, with the invocation id as the
// idempotency key; the host reports the outcome as Launched or Ended.
type Launch struct {
	Invocation string
	Attempt    int
}

// Resolve asks the target whether the attempt was launched (by its
// idempotency key); the host reports the answer as Ended, Launched,
// NotLaunched or OutcomeUnknown.
type Resolve struct {
	Invocation string
	Attempt    int
}

// AbortTarget asks the target to stop an attempt. The invocation is already
// recorded as ended; what the target says changes nothing.
type AbortTarget struct {
	Invocation string
	Attempt    int
}

// PollLater schedules a PollInvocation task: the next time to ask the
// target how a RUNNING attempt is doing.
type PollLater struct {
	Invocation string
	Attempt    int
	Nonce      int64
	At         time.Time
}

// Check asks the target, by the attempt's idempotency key, whether a
// RUNNING attempt has ended; the host reports the answer as Ended, or
// nothing while it runs.
type Check struct {
	Invocation string
	Attempt    int
}

func (TickLater) action()       {}
func (PollLater) action()       {}
func (Check) action()           {}
func (StartInvocation) action() {}
func (Record) action()          {}
func (RecordSkipped) action()   {}
func (Launch) action()          {}
func (Resolve) action()         {}
func (AbortTarget) action()     {}
