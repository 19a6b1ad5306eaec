package statemachine

import "time"

// onDefined runs the job under a new definition. A job seen for the first
// time, or enabled again, becomes SCHEDULED with no failures counted: what
// failed before was another definition's. The definition starts now: what
// fell before it was the old one's, and the host settled that with
// Redefining first. A PAUSED job stays paused; its resume plans the next
// tick under the new definition.
func (m *Machine) onDefined() {
	j := &m.Job
	if m.Policy.MaxRuns == 0 {
		j.Runs = 0 // a cap set again counts afresh
	}
	switch j.State {
	case Paused:
		return
	case Disabled, "":
		j.State, j.Reason, j.Failures = Scheduled, Reason{}, 0
	}
	j.Cursor = later(j.Cursor, m.Now)
	m.planNext()
}

// onRedefining settles what fell due under the old definition, as a tick
// would, while the machine still has its schedule and policy: the new
// definition starts at the cursor, and without this the occurrences in
// between would be no one's, neither run nor recorded. An interval has no
// fixed occurrences to settle; a PAUSED job's resume settles what fell in
// the pause, and a DISABLED or new job owes none.
func (m *Machine) onRedefining() {
	j := &m.Job
	if m.ticking() && j.State != "" && m.Schedule.Interval() == 0 {
		m.catchUp(max(m.Policy.CatchupWindow, m.Config.LateTolerance), SkipMissed)
		j.Cursor = later(j.Cursor, m.Now)
	}
}

// onRemoved disables the job for good. The occurrences due since the
// cursor whose ticks never came are recorded as skipped, as paused ones if
// the job was PAUSED (nothing is lost silently); a job DISABLED already
// recorded them when it became so. Launched invocations are left to
// finish (disable).
func (m *Machine) onRemoved(e Removed) {
	switch m.Job.State {
	case Disabled:
	case Paused:
		m.skipDue(SkipPaused)
	default:
		m.skipDue(SkipDisabled)
	}
	m.disable(e.Reason)
}

// onBroken disables a job that can no longer run (see Broken). Without a
// schedule it cannot list what fell due, so its reason is their record;
// and it aborts the launched invocations too, whose end no step of the job
// could record until its definition changes.
func (m *Machine) onBroken(e Broken) {
	j := &m.Job
	m.disable(e.Reason)
	for i := len(j.Active) - 1; i >= 0; i-- {
		m.abort(i, "the job was disabled: "+e.Reason.String())
	}
	j.Cursor = later(j.Cursor, m.Now)
}

// disable stops the job: no more ticks, the pending occurrence skipped, and
// the invocations not yet launched aborted; launched ones are left to
// finish. Auto-disable does the same as Removed: before, it left queued
// invocations to launch after the job was DISABLED.
func (m *Machine) disable(reason Reason) {
	j := &m.Job
	j.State, j.Reason, j.PausedUntil = Disabled, reason, time.Time{}
	j.Backfill = nil // what it had not started is not started
	m.clearTick()
	m.dropPending(SkipDisabled)
	for i := len(j.Active) - 1; i >= 0; i-- {
		if p := j.Active[i].Status; p == StatusQueued || p == StatusRetrying {
			m.end(i, StatusAborted, "the job was disabled: "+reason.String())
		}
	}
}

// skipDue records the occurrences in (Cursor, Now] as skipped for r, as
// one RecordSkipped, and moves the cursor to now.
func (m *Machine) skipDue(r SkipReason) {
	j := &m.Job
	if m.Schedule.Interval() > 0 {
		return // an interval has no fixed occurrences to account for
	}
	if m.capped() {
		j.Cursor = later(j.Cursor, m.Now)
		return // nor has a job past its cap
	}
	m.recordGaps()
	m.recordCalendar()
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
