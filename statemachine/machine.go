package statemachine

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"
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

func (m *Machine) step(e Event) error {
	j := &m.Job
	switch e := e.(type) {
	case Defined:
		switch j.State {
		case Paused:
			return nil // Resume plans the next tick under the new definition
		case Disabled, "":
			j.State, j.Reason, j.Failures = Scheduled, Reason{}, 0
		}
		// A new definition starts now: what fell before it was the old
		// definition's, and the host settled that with Redefining first.
		j.Cursor = later(j.Cursor, m.Now)
		m.planNext()

	case Redefining:
		if m.ticking() && j.State != "" && m.Schedule.Interval() == 0 {
			m.catchUp(max(m.Policy.CatchupWindow, m.Config.LateTolerance), SkipMissed)
			j.Cursor = later(j.Cursor, m.Now)
		}

	case Removed:
		switch j.State {
		case Disabled:
		case Paused:
			m.skipDue(SkipPaused)
		default:
			m.skipDue(SkipDisabled)
		}
		m.disable(e.Reason)

	case Broken:
		m.disable(e.Reason)
		for i := len(j.Active) - 1; i >= 0; i-- {
			m.abort(i, "the job was disabled: "+e.Reason.String())
		}
		j.Cursor = later(j.Cursor, m.Now)

	case Tick:
		if i := m.startedBy(e.Nonce); i >= 0 {
			return m.step(Starting{Invocation: j.Active[i].ID, Attempt: j.Active[i].Attempt, Nonce: e.Nonce})
		}
		if e.Nonce == 0 || e.Nonce != j.TickNonce || !m.ticking() {
			return nil
		}
		if e.Start {
			defer m.startHere(len(m.Actions), e.Nonce)
		}
		if m.Now.Before(j.TickAt) { // early: the queue's clock runs ahead of ours
			m.tickAt(j.TickAt)
			return nil
		}
		// A hop toward a far occurrence, or a tick that let a backfill
		// go on (advanceBackfill): either may come before the occurrence's
		// jitter has passed, and the occurrence waits for it.
		if due := j.NextAt.Add(m.jitter(j.NextAt)); m.Now.Before(due) {
			m.tickAt(due)
			return nil
		}
		if m.Schedule.Interval() > 0 {
			// Read the occurrence before clearTick zeroes NextAt; the
			// other order recorded every interval occurrence at the zero
			// time, all under one invocation id.
			o := j.NextAt
			m.clearTick()
			j.Cursor = o
			if m.fromBackup(o) {
				m.skipOne(Occurrence{ID: OccurrenceID(o), At: o}, SkipMissed)
			} else {
				m.admit(Occurrence{ID: OccurrenceID(o), At: o})
			}
			m.planNext()
			return nil
		}
		m.catchUp(max(m.Policy.CatchupWindow, m.Config.LateTolerance), SkipMissed)
		j.Cursor = m.Now
		m.planNext()

	case Triggered:
		if j.State == Disabled {
			return fmt.Errorf("%w: the job is disabled (%s)", ErrRefused, j.Reason)
		}
		j.Triggers++
		m.admit(Occurrence{ID: TriggerID(j.Triggers), At: m.Now, Manual: true})

	case PauseRequested:
		switch j.State {
		case Disabled:
			return fmt.Errorf("%w: the job is disabled (%s)", ErrRefused, j.Reason)
		case Paused:
			return nil
		}
		j.State, j.Reason = Paused, Reason{Kind: ReasonPaused, Note: e.Note}
		m.clearTick()
		m.dropPending(SkipPaused)

	case ResumeRequested:
		if j.State != Paused {
			return nil
		}
		j.State, j.Reason = Scheduled, Reason{}
		if m.Schedule.Interval() == 0 {
			// Only the catch-up window brings back what fell in the pause.
			m.catchUp(m.Policy.CatchupWindow, SkipPaused)
		}
		// An interval counts again from the resume: the pause does not
		// leave a run owed.
		j.Cursor = later(j.Cursor, m.Now)
		m.planNext()

	case AbortRequested:
		found := false
		for i := len(j.Active) - 1; i >= 0; i-- {
			if e.Invocation == "" || j.Active[i].ID == e.Invocation {
				m.abort(i, "aborted by an admin")
				found = true
			}
		}
		if !found && e.Invocation != "" {
			return fmt.Errorf("%w: invocation %q has ended or does not exist", ErrRefused, e.Invocation)
		}
		m.afterEnd()

	case Starting:
		i := m.find(e.Invocation, e.Attempt)
		if i < 0 || j.Active[i].Nonce != e.Nonce {
			return nil
		}
		inv := &j.Active[i]
		switch inv.Status {
		case StatusQueued, StatusRetrying:
			if m.fromBackup(inv.At) {
				m.abort(i, "restored from a backup: this invocation may have launched after the backup was taken, so it does not launch again")
				m.afterEnd()
				return nil
			}
			if m.Now.Before(inv.RetryAt) {
				m.startAt(i, inv.RetryAt)
				return nil
			}
			m.launch(i, "")
		case StatusLaunching:
			// The task came again while the launch is unresolved: the
			// process that was calling the target may be gone — or may be
			// about to reach the target, and asking now would hear "never
			// launched" and launch twice. Only after LaunchGrace is the
			// answer worth acting on.
			if m.Now.Before(inv.Since.Add(m.Config.LaunchGrace)) {
				return ErrLaunchInProgress
			}
			m.emit(Resolve{Invocation: inv.ID, Attempt: inv.Attempt})
		}

	case Launched:
		if i := m.find(e.Invocation, e.Attempt); i >= 0 && j.Active[i].Status == StatusLaunching {
			j.Active[i].Status = StatusRunning
			m.record(j.Active[i], StatusRunning, e.Message)
			if m.Config.MinPoll > 0 {
				m.pollAt(i, m.Now.Add(m.pollWait(j.Active[i])))
			}
		}

	case PollDue:
		i := m.find(e.Invocation, e.Attempt)
		if i < 0 || j.Active[i].Status != StatusRunning || e.Nonce == 0 || j.Active[i].PollNonce != e.Nonce {
			return nil
		}
		inv := &j.Active[i]
		if m.Now.Before(inv.PollAt) { // early: the queue's clock runs ahead of ours
			m.pollAt(i, inv.PollAt)
			return nil
		}
		m.emit(Check{Invocation: inv.ID, Attempt: inv.Attempt})
		m.pollAt(i, m.Now.Add(m.pollWait(*inv)))

	case Ended:
		i := m.find(e.Invocation, e.Attempt)
		if i < 0 || !launched(j.Active[i].Status) {
			return nil
		}
		if e.Succeeded {
			m.end(i, StatusSucceeded, e.Message)
		} else {
			m.fail(i, e.Message, true)
		}
		m.afterEnd()

	case NotLaunched:
		if i := m.find(e.Invocation, e.Attempt); i >= 0 && j.Active[i].Status == StatusLaunching {
			m.launch(i, "the target never received the launch; launching it now")
		}

	case OutcomeUnknown:
		i := m.find(e.Invocation, e.Attempt)
		if i < 0 || j.Active[i].Status != StatusLaunching {
			return nil
		}
		// A launch of unknown outcome is an attempt made: retried only
		// for an idempotent target, and only as the next attempt, so
		// max_attempts and the backoff bound a launch that kills the
		// server (before, it was made again as the same attempt at every
		// start, without end); a DISABLED job retries nothing.
		m.fail(i, "launch outcome unknown", m.Policy.Idempotent)
		m.afterEnd()

	case WatchdogExpired:
		m.repair()

	case BackfillRequested:
		return m.requestBackfill(e)

	case BackfillCanceled:
		if j.Backfill == nil {
			return fmt.Errorf("%w: no backfill is under way", ErrRefused)
		}
		j.Backfill = nil

	default:
		panic(fmt.Sprintf("statemachine: unknown event %T", e))
	}
	return nil
}

// requestBackfill starts a backfill of [e.From, e.To), cut at the Cursor.
func (m *Machine) requestBackfill(e BackfillRequested) error {
	j := &m.Job
	switch {
	case j.State == Disabled:
		return fmt.Errorf("%w: the job is disabled (%s)", ErrRefused, j.Reason)
	case m.Schedule == nil || m.Schedule.Interval() > 0:
		return fmt.Errorf("%w: the job's schedule has no fixed occurrences to backfill", ErrRefused)
	case !e.From.Before(e.To):
		return fmt.Errorf("%w: the backfill range is empty: from %s is not before to %s", ErrRefused, e.From.UTC().Format(time.RFC3339), e.To.UTC().Format(time.RFC3339))
	case j.Backfill != nil:
		return fmt.Errorf("%w: a backfill of [%s, %s) is under way; cancel it first", ErrRefused,
			j.Backfill.From.UTC().Format(time.RFC3339), j.Backfill.To.UTC().Format(time.RFC3339))
	}
	to := e.To
	if limit := j.Cursor.Add(time.Nanosecond); to.After(limit) {
		to = limit
	}
	if !e.From.Before(to) {
		return fmt.Errorf("%w: the job's schedule accounts for the occurrences after %s itself; a backfill must start before it",
			ErrRefused, j.Cursor.UTC().Format(time.RFC3339))
	}
	j.Backfill = &Backfill{From: e.From, To: to, Next: e.From}
	return nil
}

// advanceBackfill starts the backfill's next occurrence that has no
// record, when the job is ticking and has no invocation that has not ended
// and nothing pending; the backfill ends when none is left. It looks at
// Config.BackfillScan occurrences at most; when all of them have records,
// a tick due now brings the next step, which goes on from Next: the job's
// own next tick may be a day away.
func (m *Machine) advanceBackfill() {
	j := &m.Job
	b := j.Backfill
	if b == nil || !m.ticking() || len(j.Active) > 0 || j.Pending != nil {
		return
	}
	limit := m.Config.BackfillScan
	if limit <= 0 {
		limit = DefaultConfig.BackfillScan
	}
	batch := make([]time.Time, 0, 1)
	looked := 0
	for at := range m.Schedule.Between(b.Next, b.To) {
		if looked == limit {
			m.tickNow()
			return
		}
		looked++
		batch = append(batch, at)
		if len(batch) == cap(batch) || looked == limit {
			if m.runFirstUnrecorded(batch) {
				return
			}
			batch = make([]time.Time, 0, 2*cap(batch))
		}
	}
	if !m.runFirstUnrecorded(batch) {
		j.Backfill = nil
	}
}

// runFirstUnrecorded queues the first of the backfill's occurrences ats
// (in time order) that has no record, and moves the backfill's Next past
// it, or past them all when each has one. It reports whether it queued one.
func (m *Machine) runFirstUnrecorded(ats []time.Time) bool {
	if len(ats) == 0 {
		return false
	}
	ids := make([]string, len(ats))
	for i, at := range ats {
		ids[i] = OccurrenceID(at)
	}
	recorded := make([]bool, len(ids))
	if m.Recorded != nil {
		recorded = m.Recorded(ids)
	}
	b := m.Job.Backfill
	for i, at := range ats {
		b.Next = at.Add(time.Nanosecond)
		// A host that left an id unanswered cannot be trusted on it: not
		// running it is what keeps it from running twice.
		if i >= len(recorded) || recorded[i] || m.recordedInStep(ids[i]) {
			continue
		}
		m.queue(Occurrence{ID: ids[i], At: at, Backfill: true})
		return true
	}
	return false
}

// tickNow makes sure a tick is due now. Its step fires the job's next
// occurrence if that is due by then, and otherwise only ticks again for
// it, as a hop does (Tick): the schedule keeps its place either way. A
// tick this step planned would be stale before it came: it is left out
// rather than posted for nothing.
func (m *Machine) tickNow() {
	j := &m.Job
	if j.TickNonce != 0 && !j.TickAt.After(m.Now) {
		return
	}
	if i := slices.IndexFunc(m.Actions[m.from:], func(a Action) bool {
		t, ok := a.(TickLater)
		return ok && t.Nonce == j.TickNonce
	}); i >= 0 {
		m.Actions = slices.Delete(m.Actions, m.from+i, m.from+i+1)
	}
	m.tickAt(m.Now)
}

// recordedInStep reports whether this step gave an occurrence id a
// record, which the host's store may not show yet.
func (m *Machine) recordedInStep(id string) bool {
	for _, a := range m.Actions {
		switch a := a.(type) {
		case Record:
			if a.ID == id {
				return true
			}
		case RecordSkipped:
			if a.ID == id {
				return true
			}
		}
	}
	return false
}

// repair re-issues every task the job waits for whose time has passed, and
// ends the attempts that overran their hard timeout.
func (m *Machine) repair() {
	j := &m.Job
	if j.TickNonce != 0 && !m.Now.Before(j.TickAt.Add(m.Config.TaskGrace)) {
		m.tickAt(m.Now)
	}
	ended := false
	for i := len(j.Active) - 1; i >= 0; i-- {
		inv := j.Active[i]
		if m.Now.Before(inv.Deadline) {
			// A lost poll would leave a finished attempt RUNNING until
			// its hard timeout failed it.
			if inv.Status == StatusRunning && inv.PollNonce != 0 && !m.Now.Before(inv.PollAt.Add(m.Config.TaskGrace)) {
				m.pollAt(i, m.Now)
			}
			continue
		}
		switch inv.Status {
		case StatusQueued, StatusRetrying:
			m.startAt(i, m.Now)
		case StatusLaunching, StatusRunning:
			m.emit(AbortTarget{Invocation: inv.ID, Attempt: inv.Attempt})
			// A launch never confirmed may or may not have happened: retrying
			// it could run the occurrence twice, unless the target is
			// idempotent.
			retry := inv.Status == StatusRunning || m.Policy.Idempotent
			m.fail(i, fmt.Sprintf("timed out: no outcome %s after the launch", m.hardTimeout()), retry)
			ended = true
		}
	}
	if ended {
		m.afterEnd()
	}
}

// catchUp accounts for the occurrences in (Cursor, Now]: the latest runs if
// it is at most window late, the others are recorded as skipped: tooOld
// beyond the window, superseded within it.
func (m *Machine) catchUp(window time.Duration, tooOld SkipReason) {
	var skips []RecordSkipped
	skip := func(at time.Time, r SkipReason) {
		if n := len(skips); n > 0 && skips[n-1].Reason == r {
			skips[n-1].Last = at
			skips[n-1].Count++
			return
		}
		skips = append(skips, RecordSkipped{ID: OccurrenceID(at), First: at, Last: at, Count: 1, Reason: r})
	}
	m.recordGaps()
	var latest time.Time
	for at := range m.Schedule.Between(m.Job.Cursor.Add(time.Nanosecond), m.Now.Add(time.Nanosecond)) {
		if !latest.IsZero() {
			skip(latest, m.reasonIfNotLatest(latest, window, tooOld))
		}
		latest = at
	}
	if !latest.IsZero() && (m.lateness(latest) > window || m.fromBackup(latest)) {
		skip(latest, tooOld)
		latest = time.Time{}
	}
	for _, s := range skips {
		m.emit(s)
	}
	if !latest.IsZero() {
		m.admit(Occurrence{ID: OccurrenceID(latest), At: latest})
	}
}

func (m *Machine) reasonIfNotLatest(at time.Time, window time.Duration, tooOld SkipReason) SkipReason {
	if m.lateness(at) > window {
		return tooOld
	}
	return SkipSuperseded
}

// fromBackup reports whether an occurrence is one a restored backup held
// as due, which may have run after the backup was taken (Config.RestoredAt).
func (m *Machine) fromBackup(at time.Time) bool {
	return !m.Config.RestoredAt.IsZero() && at.Before(m.Config.RestoredAt)
}

// lateness is how long ago an occurrence was due, its jitter included.
func (m *Machine) lateness(at time.Time) time.Duration {
	return m.Now.Sub(at.Add(m.jitter(at)))
}

// admit applies the overlap policy to an occurrence that is due now.
func (m *Machine) admit(o Occurrence) {
	j := &m.Job
	if len(j.Active) == 0 {
		m.queue(o)
		return
	}
	switch m.Policy.Overlap {
	case OverlapQueueOne:
		m.dropPending(SkipOverrun)
		j.Pending = &o
	case OverlapAllow:
		if len(j.Active) < max(1, m.Policy.MaxConcurrent) {
			m.queue(o)
		} else {
			m.skipOne(o, SkipOverrun)
		}
	case OverlapReplace:
		for i := len(j.Active) - 1; i >= 0; i-- {
			m.abort(i, "replaced by occurrence "+o.ID)
		}
		m.queue(o)
	default:
		m.skipOne(o, SkipOverrun)
	}
}

// queue makes an occurrence an invocation whose first attempt starts now.
func (m *Machine) queue(o Occurrence) {
	inv := Invocation{Occurrence: o, Attempt: 1}
	m.Job.Active = append(m.Job.Active, inv)
	i := len(m.Job.Active) - 1
	m.record(inv, StatusQueued, "")
	m.startAt(i, m.Now)
}

// startAt (re)issues the StartInvocation of Active[i] for at, with a fresh
// nonce so that an earlier copy of the task is stale.
func (m *Machine) startAt(i int, at time.Time) {
	inv := &m.Job.Active[i]
	if inv.Status != StatusRetrying {
		inv.Status = StatusQueued
	}
	inv.Nonce = m.NewNonce()
	inv.Since = m.Now
	inv.Deadline = at.Add(m.Config.TaskGrace)
	// A retry's polls are its own: the last attempt's would keep the
	// watchdog timer at a poll that nothing expects any more.
	inv.PollNonce, inv.PollAt = 0, time.Time{}
	m.emit(StartInvocation{Invocation: inv.ID, Attempt: inv.Attempt, Nonce: inv.Nonce, At: at})
}

// startHere launches, in the tick's own step, the first attempt the tick
// (whose actions begin at from) made due at once: it takes the place of its
// StartInvocation, which is not emitted, and the attempt takes the tick's
// nonce as its own, so that the tick's task, until it is acknowledged,
// is that StartInvocation. The attempt is then started exactly as the
// task's delivery would have started it. One attempt at most: the host
// calls the target once per delivered task.
func (m *Machine) startHere(from int, nonce int64) {
	for k := from; k < len(m.Actions); k++ {
		a, ok := m.Actions[k].(StartInvocation)
		if !ok || a.At.After(m.Now) {
			continue
		}
		i := m.find(a.Invocation, a.Attempt)
		if i < 0 || m.Job.Active[i].Nonce != a.Nonce {
			continue
		}
		m.Actions = slices.Delete(m.Actions, k, k+1)
		m.Job.Active[i].Nonce = nonce
		// A Starting for an attempt this step queued cannot be refused.
		_ = m.step(Starting{Invocation: a.Invocation, Attempt: a.Attempt, Nonce: nonce})
		return
	}
}

// startedBy returns the index in Active of the attempt the tick with this
// nonce launched itself (startHere), or -1.
func (m *Machine) startedBy(nonce int64) int {
	if nonce == 0 {
		return -1
	}
	return slices.IndexFunc(m.Job.Active, func(inv Invocation) bool { return inv.Nonce == nonce })
}

// launch records LAUNCHING for Active[i] and asks the host to call the
// target once that record has committed.
func (m *Machine) launch(i int, msg string) {
	inv := &m.Job.Active[i]
	inv.Status, inv.Since, inv.RetryAt = StatusLaunching, m.Now, time.Time{}
	inv.Deadline = m.Now.Add(m.hardTimeout())
	m.record(*inv, StatusLaunching, msg)
	m.emit(Launch{Invocation: inv.ID, Attempt: inv.Attempt})
}

// pollAt schedules the next poll of the RUNNING Active[i] for at, with a
// fresh nonce so that an earlier copy of the task is stale.
func (m *Machine) pollAt(i int, at time.Time) {
	inv := &m.Job.Active[i]
	inv.PollNonce, inv.PollAt = m.NewNonce(), at
	m.emit(PollLater{Invocation: inv.ID, Attempt: inv.Attempt, Nonce: inv.PollNonce, At: at})
}

// pollWait is the wait before the next poll of a RUNNING attempt: as long
// as it has run since its launch, within [MinPoll, MaxPoll], so the waits
// double from MinPoll and the polls of a long task thin out to MaxPoll
// apart.
func (m *Machine) pollWait(inv Invocation) time.Duration {
	d := max(m.Now.Sub(inv.Since), m.Config.MinPoll)
	if m.Config.MaxPoll > 0 {
		d = min(d, m.Config.MaxPoll)
	}
	return d
}

// fail ends the attempt of Active[i] as failed, and schedules the next
// attempt when retry is allowed and the policy has attempts left.
func (m *Machine) fail(i int, msg string, retry bool) {
	inv := &m.Job.Active[i]
	// A DISABLED job starts nothing new, retries included: Removed aborts
	// the attempts waiting to start, and one left to finish must not start
	// another (its config may be gone).
	if !retry || m.Job.State == Disabled || inv.Attempt >= max(1, m.Policy.MaxAttempts) {
		m.end(i, StatusFailed, msg)
		return
	}
	wait := m.backoff(inv.Attempt)
	inv.Attempt++
	inv.Status, inv.RetryAt = StatusRetrying, m.Now.Add(wait)
	m.record(*inv, StatusRetrying, fmt.Sprintf("attempt %d failed: %s; attempt %d in %s", inv.Attempt-1, msg, inv.Attempt, wait))
	m.startAt(i, inv.RetryAt)
}

// backoff is the wait after the given failed attempt: MinBackoff doubling
// per attempt, at most MaxBackoff (no cap when MaxBackoff is 0).
func (m *Machine) backoff(attempt int) time.Duration {
	d := m.Policy.MinBackoff
	for range attempt - 1 {
		// Only a positive MaxBackoff caps: with 0, d >= 0/2 held at once
		// and every wait after the second attempt was 0.
		if m.Policy.MaxBackoff > 0 && d >= m.Policy.MaxBackoff/2 {
			return m.Policy.MaxBackoff
		}
		if d > math.MaxInt64/2 { // uncapped: stop doubling before it overflows
			return d
		}
		d *= 2
	}
	if m.Policy.MaxBackoff > 0 {
		d = min(d, m.Policy.MaxBackoff)
	}
	return d
}

// abort ends Active[i] as aborted, telling the target to stop it if it
// may be running.
func (m *Machine) abort(i int, msg string) {
	inv := m.Job.Active[i]
	if launched(inv.Status) {
		m.emit(AbortTarget{Invocation: inv.ID, Attempt: inv.Attempt})
	}
	m.end(i, StatusAborted, msg)
}

// end records how Active[i] ended and removes it.
func (m *Machine) end(i int, st Status, msg string) {
	j := &m.Job
	inv := j.Active[i]
	j.Active = slices.Delete(j.Active, i, i+1)
	m.record(inv, st, msg)
	j.LastEnded = m.Now
	switch st {
	case StatusSucceeded:
		j.Failures = 0
	case StatusFailed:
		j.Failures++
	}
}

// afterEnd does what a free slot allows: auto-disable after too many
// failures, start the pending occurrence, or plan an interval's next tick.
func (m *Machine) afterEnd() {
	j := &m.Job
	if n := m.Policy.AutoDisableAfter; n > 0 && j.Failures >= n && j.State != Disabled {
		// Occurrences already due whose tick has not come (late, lost, or
		// waiting for its jitter) would vanish with the tick; a paused
		// job's would vanish with the resume that never comes.
		if j.State == Paused {
			m.skipDue(SkipPaused)
		} else {
			m.skipDue(SkipDisabled)
		}
		m.disable(Reason{Kind: ReasonAutoDisabled, Note: fmt.Sprintf("after %d failed invocations in a row", j.Failures)})
		return
	}
	if j.Pending != nil && len(j.Active) == 0 {
		o := *j.Pending
		j.Pending = nil
		m.queue(o)
	}
	if m.ticking() && j.TickNonce == 0 {
		m.planNext()
	}
}

// disable stops the job: no more ticks, the pending occurrence skipped, and
// the invocations not yet launched aborted; launched ones are left to
// finish. Auto-disable does the same as Removed: before, it left queued
// invocations to launch after the job was DISABLED.
func (m *Machine) disable(reason Reason) {
	j := &m.Job
	j.State, j.Reason = Disabled, reason
	j.Backfill = nil // what it had not started is not started
	m.clearTick()
	m.dropPending(SkipDisabled)
	for i := len(j.Active) - 1; i >= 0; i-- {
		if p := j.Active[i].Status; p == StatusQueued || p == StatusRetrying {
			m.end(i, StatusAborted, "the job was disabled: "+reason.String())
		}
	}
}

// recordGaps records the fire times that DST gaps in (Cursor, Now]
// swallowed under gap: skip, one record per gap.
func (m *Machine) recordGaps() {
	for at, n := range m.Schedule.GapSkipped(m.Job.Cursor.Add(time.Nanosecond), m.Now.Add(time.Nanosecond)) {
		m.emit(RecordSkipped{ID: GapID(at), First: at, Last: at, Count: n, Reason: SkipDSTGap})
	}
}

// skipDue records the occurrences in (Cursor, Now] as skipped for r, as
// one RecordSkipped, and moves the cursor to now.
func (m *Machine) skipDue(r SkipReason) {
	j := &m.Job
	if m.Schedule.Interval() > 0 {
		return // an interval has no fixed occurrences to account for
	}
	m.recordGaps()
	var s RecordSkipped
	for at := range m.Schedule.Between(j.Cursor.Add(time.Nanosecond), m.Now.Add(time.Nanosecond)) {
		if s.Count == 0 {
			s = RecordSkipped{ID: OccurrenceID(at), First: at, Reason: r}
		}
		s.Last = at
		s.Count++
	}
	if s.Count > 0 {
		m.emit(s)
	}
	j.Cursor = later(j.Cursor, m.Now)
}

// planNext schedules the tick for the next occurrence after Cursor (after
// the end of the last invocation, for an interval), if there is one and the
// job is ticking. An interval job that has an unfinished invocation waits
// for its end.
func (m *Machine) planNext() {
	j := &m.Job
	m.clearTick()
	if !m.ticking() {
		return
	}
	var next time.Time
	if iv := m.Schedule.Interval(); iv > 0 {
		if len(j.Active) > 0 {
			return
		}
		// Never in the past: a tick already due would have its watchdog
		// timer passed before it was ever posted.
		next = later(later(j.Cursor, j.LastEnded).Add(iv), m.Now)
	} else {
		t, ok := m.Schedule.Next(j.Cursor)
		if !ok {
			return
		}
		next = t
	}
	j.NextAt = next
	m.tickAt(next.Add(m.jitter(next)))
}

// tickAt schedules a TickLater for at (or a hop toward it) with a fresh
// nonce, which makes every earlier tick stale.
func (m *Machine) tickAt(at time.Time) {
	if d := m.Config.MaxTickDelay; d > 0 && at.After(m.Now.Add(d)) {
		at = m.Now.Add(d)
	}
	m.Job.TickAt, m.Job.TickNonce = at, m.NewNonce()
	m.emit(TickLater{At: at, Nonce: m.Job.TickNonce})
}

func (m *Machine) clearTick() {
	m.Job.TickNonce, m.Job.TickAt, m.Job.NextAt = 0, time.Time{}, time.Time{}
}

// ticking reports whether the job's schedule drives it now.
func (m *Machine) ticking() bool {
	return m.Job.State != Disabled && m.Job.State != Paused
}

func (m *Machine) dropPending(r SkipReason) {
	if p := m.Job.Pending; p != nil {
		m.Job.Pending = nil
		m.skipOne(*p, r)
	}
}

func (m *Machine) skipOne(o Occurrence, r SkipReason) {
	m.emit(RecordSkipped{ID: o.ID, First: o.At, Last: o.At, Count: 1, Manual: o.Manual, Reason: r})
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

func (m *Machine) hardTimeout() time.Duration {
	t := m.Policy.Timeout
	if t <= 0 {
		t = m.Config.DefaultTimeout
	}
	return t + m.Config.KillGrace
}

func (m *Machine) jitter(at time.Time) time.Duration {
	return Jitter(m.JobID, at, m.Policy.Jitter)
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

func launched(p Status) bool { return p == StatusLaunching || p == StatusRunning }

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// OccurrenceID is the invocation id of a scheduled occurrence: its time in
// UTC, so the same occurrence always gets the same id, and a second
// invocation of it is impossible to create by mistake.
func OccurrenceID(at time.Time) string {
	return at.UTC().Format("20060102T150405.999999999Z")
}

// TriggerID is the invocation id of the job's n-th manual trigger.
func TriggerID(n int64) string {
	return triggerPrefix + strconv.FormatInt(n, 10)
}

const triggerPrefix = "manual-"

// TriggerNumber is n for the id TriggerID(n); ok is false for any other id.
func TriggerNumber(id string) (n int64, ok bool) {
	digits, ok := strings.CutPrefix(id, triggerPrefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	return n, err == nil && n > 0 && TriggerID(n) == id
}

// GapID is the id of the record of the fire times a DST gap ending at `at`
// swallowed. It cannot be an occurrence's id, though `at` may be one.
func GapID(at time.Time) string {
	return OccurrenceID(at) + "-dst-gap"
}

// Jitter is the delay of the occurrence at `at` of job jobID: a stable hash
// of both below max, in whole milliseconds, so a late launch can always be
// told from a jittered one.
func Jitter(jobID string, at time.Time, max time.Duration) time.Duration {
	ms := uint64(max / time.Millisecond)
	if ms == 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(jobID))
	h.Write([]byte(OccurrenceID(at)))
	return time.Duration(h.Sum64()%ms) * time.Millisecond
}
