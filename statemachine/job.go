package statemachine

import (
	"iter"
	"slices"
	"time"
)

// State is the state of a job.
type State string

// The states of a job. See the package documentation.
const (
	Disabled  State = "DISABLED"
	Scheduled State = "SCHEDULED"
	Queued    State = "QUEUED"
	Running   State = "RUNNING"
	Paused    State = "PAUSED"
)

// States lists every state, for tests and documentation.
var States = []State{Disabled, Scheduled, Queued, Running, Paused}

// JobState is the persisted state of one job's machine.
type JobState struct {
	State  State
	Reason Reason // why the job is DISABLED or PAUSED

	// TickNonce is the nonce the expected TickLater carries; 0 when no tick
	// is expected. A tick with any other nonce is stale.
	TickNonce int64
	// TickAt is when the expected tick is due: the next occurrence plus its
	// jitter, or an earlier hop toward a far occurrence.
	TickAt time.Time
	// NextAt is the next occurrence the tick is for.
	NextAt time.Time

	// Cursor is the latest instant up to which every occurrence has been
	// accounted for: run, queued or recorded as skipped.
	Cursor time.Time

	// Pending is the one occurrence waiting for a free slot (overlap
	// queue_one), if any.
	Pending *Occurrence
	// Active lists the invocations that have not ended, oldest first.
	Active []Invocation

	Failures int   // failed invocations in a row
	Triggers int64 // manual triggers so far; numbers their ids
	// Runs counts the scheduled occurrences that became invocations while
	// the job has a cap on them (Policy.MaxRuns); 0 without one.
	Runs int64
	// PausedUntil is when a PAUSED job resumes by itself, its tick due
	// then; zero for a pause until someone resumes it.
	PausedUntil time.Time
	LastEnded   time.Time // when an invocation last ended; intervals count from it

	// WatchdogTimerTs is when the earliest task the job waits for must have
	// run; zero when it waits for none.
	WatchdogTimerTs time.Time

	// Backfill is the backfill under way, if any.
	Backfill *Backfill
}

// Backfill is a run of a past range of the job's occurrences, one at a
// time: the next one starts only when the job has no invocation that has
// not ended and nothing pending, so a backfill never competes with the
// schedule for a slot, and the live occurrences that come while one of
// its invocations runs meet the overlap policy as they would any other.
type Backfill struct {
	// From and To bound the range, [From, To). To is never past the
	// Cursor the job had when the backfill was asked for: what follows
	// it is the schedule's own to account for, so the two never share an
	// occurrence.
	From, To time.Time
	// Next is where the search for the next occurrence to run resumes.
	Next time.Time
}

// Occurrence is one moment a job fires: a scheduled time or a manual trigger.
type Occurrence struct {
	ID     string    // the invocation id it gets; see OccurrenceID
	At     time.Time // the scheduled time, or when the trigger was asked for
	Manual bool
	// Backfill marks a scheduled occurrence run by a backfill, long after
	// its time, rather than by its tick.
	Backfill bool
}

// Invocation is the machine's view of an invocation that has not ended.
type Invocation struct {
	Occurrence
	Attempt int
	// Status is where it is, one of the statuses of an invocation that has
	// not ended: QUEUED (its StartInvocation is due now), RETRYING (an
	// attempt failed; the next one's StartInvocation is due at RetryAt),
	// LAUNCHING (committed, and the target is being called: whether the
	// launch happened is not known yet; the host records a synchronous
	// target's attempt RUNNING meanwhile, its call being its run), RUNNING
	// (the target accepted the launch and runs it).
	Status  Status
	Nonce   int64     // the nonce of the StartInvocation this status expects
	Since   time.Time // when it entered this status (LAUNCHING, and RUNNING after it: the launch)
	RetryAt time.Time // RETRYING: when the next attempt may start
	// Deadline is when the watchdog acts if the invocation still has this
	// status: the task grace past when its task was due, or the hard
	// timeout of a launched attempt.
	Deadline time.Time
	// PollNonce and PollAt: RUNNING, the nonce the next PollInvocation
	// carries and when it is due. A poll with another nonce is stale.
	PollNonce int64
	PollAt    time.Time
}

// Schedule is what the machine needs of a parsed schedule;
// *schedule.Schedule implements it.
type Schedule interface {
	// Next is the first fire time strictly after t, if any.
	Next(t time.Time) (time.Time, bool)
	// Between yields the fire times in [from, to).
	Between(from, to time.Time) iter.Seq[time.Time]
	// Interval is positive for a schedule relative to the end of the
	// previous invocation (@every): it has no fixed fire times.
	Interval() time.Duration
	// GapSkipped yields the DST gaps ending in [from, to) that swallowed
	// fire times under the gap: skip policy: when each ended, and how many.
	GapSkipped(from, to time.Time) iter.Seq2[time.Time, int]
	// CalendarSkipped yields the fire times in [from, to) that the job's
	// calendars remove, each with why in words. Between and Next leave
	// them out, as they leave out what falls outside the job's active
	// window, which no one records: there the job has no occurrences.
	CalendarSkipped(from, to time.Time) iter.Seq2[time.Time, string]
}

// Overlap says what happens to an occurrence that comes while an invocation
// of the same job has not ended.
type Overlap string

// The overlap policies.
const (
	OverlapSkip     Overlap = "skip"      // record it as skipped: overrun (the default)
	OverlapQueueOne Overlap = "queue_one" // keep it, and only the newest, until a slot is free
	OverlapAllow    Overlap = "allow"     // start it, up to MaxConcurrent at once
	OverlapReplace  Overlap = "replace"   // abort the running ones, start it
)

// Policy is the part of a job's definition the machine obeys.
type Policy struct {
	Overlap       Overlap
	MaxConcurrent int // for OverlapAllow; 0 counts as 1

	// CatchupWindow is how old a missed occurrence may be and still run
	// (only the latest one, once). Zero records every missed occurrence.
	CatchupWindow time.Duration

	Timeout time.Duration // soft: the target's deadline; 0 takes Config.DefaultTimeout

	MaxAttempts int // attempts per occurrence; 0 counts as 1
	MinBackoff  time.Duration
	MaxBackoff  time.Duration

	AutoDisableAfter int           // disable after this many failures in a row; 0 never
	Jitter           time.Duration // delay each occurrence by a stable hash below this
	Idempotent       bool          // may a launch of unknown outcome be retried, as the next attempt?

	// MaxRuns caps the scheduled occurrences that become invocations,
	// counted in JobState.Runs from when the cap was set; once reached,
	// the job has no more occurrences. Manual triggers and backfills do
	// not count. 0: no cap.
	MaxRuns int64
}

// Config holds the engine-wide durations the machine needs.
type Config struct {
	// TaskGrace is how late a task may run before the watchdog re-issues it.
	TaskGrace time.Duration
	// KillGrace is added to an invocation's timeout to get its hard timeout,
	// past which the watchdog ends it as timed out.
	KillGrace time.Duration
	// LateTolerance is how late an occurrence may be found due and still run
	// when the job's catch-up window is smaller: a tick delayed by load or
	// repaired by the watchdog is late, not missed.
	LateTolerance time.Duration
	// LaunchGrace is how long after a launch began a repeat of its
	// StartInvocation waits before asking the target whether the launch
	// happened: until then the first process may still be on its way to
	// the target.
	LaunchGrace time.Duration
	// DefaultTimeout is the timeout of a job that sets none.
	DefaultTimeout time.Duration
	// MaxTickDelay is the longest delay the task queue accepts; a tick due
	// later hops there first (Cloud Tasks refuses ETAs past 30 days).
	MaxTickDelay time.Duration
	// MinPoll and MaxPoll bound the wait between two polls of a RUNNING
	// attempt: the first comes MinPoll after the launch, and each wait is
	// as long as the attempt has run so far, within the bounds (LUCI's
	// Buildbucket target backs off the same way). A MinPoll of 0 polls
	// nothing: the attempt ends by a push or its hard timeout.
	MinPoll, MaxPoll time.Duration
	// RestoredAt is when the server first started on a database restored
	// from a backup; zero otherwise. What the backup holds as due or queued
	// may have run after the backup was taken, and the file cannot tell:
	// occurrences scheduled before RestoredAt are recorded as missed, and
	// invocations of such occurrences end ABORTED instead of launching
	// (fail closed). Those LAUNCHING are ambiguous, as after any crash.
	RestoredAt time.Time
	// BackfillScan is how many of a backfill's occurrences one step looks
	// at, at most, for one without a record (0 takes DefaultConfig's):
	// each look reads the store inside the job's transaction (see
	// Machine.Recorded), and a range that is mostly recorded would
	// otherwise be read whole in one. A step that looks at that many and
	// finds none to run plans a tick due now, whose step goes on from
	// there.
	BackfillScan int
}

// DefaultConfig is what the engine runs with unless told otherwise.
var DefaultConfig = Config{
	TaskGrace:      30 * time.Second,
	KillGrace:      30 * time.Second,
	LateTolerance:  3 * time.Minute,
	LaunchGrace:    10 * time.Second,
	DefaultTimeout: 10 * time.Minute,
	MaxTickDelay:   29 * 24 * time.Hour,
	MinPoll:        time.Minute,
	MaxPoll:        10 * time.Minute,
	BackfillScan:   1000,
}

// AwaitsOnlyTick reports whether the job waits for nothing but the tick
// with this nonce: SCHEDULED, ticking for it, with no invocation that has
// not ended, nothing pending and no backfill. Until that tick no task
// steps such a job; only a request can (a pause, a trigger, a new
// definition). So its tick stepped ahead of TickAt, as of TickAt, takes
// the step it would take at TickAt unless a request comes between, and a
// host may take it then (engine.PrepareTask).
func (j JobState) AwaitsOnlyTick(nonce int64) bool {
	return nonce != 0 && j.TickNonce == nonce && j.State == Scheduled &&
		len(j.Active) == 0 && j.Pending == nil && j.Backfill == nil
}

// Clone returns a copy of j that shares nothing with it: a step on the copy
// leaves j as it was.
func (j JobState) Clone() JobState {
	if j.Pending != nil {
		p := *j.Pending
		j.Pending = &p
	}
	j.Active = slices.Clone(j.Active)
	if j.Backfill != nil {
		b := *j.Backfill
		j.Backfill = &b
	}
	return j
}
