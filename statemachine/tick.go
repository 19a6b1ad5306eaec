package statemachine

import (
	"slices"
	"time"
)

// onTick fires what the tick was planned for. Ticks come at least once and
// not always on time, so each carries the nonce it was planned with: a
// stale one does nothing (invariant 6), and one that comes before its
// time ticks again for it. A cron schedule then accounts for everything
// that fell due since the cursor (catchUp), an interval for its one
// occurrence. A tick the host may launch from (Tick.Start) launches the
// attempt it made due itself, and delivered again it is that attempt's
// StartInvocation delivered again.
func (m *Machine) onTick(e Tick) error {
	j := &m.Job
	if i := m.startedBy(e.Nonce); i >= 0 {
		return m.onStarting(Starting{Invocation: j.Active[i].ID, Attempt: j.Active[i].Attempt, Nonce: e.Nonce})
	}
	if e.Nonce == 0 || e.Nonce != j.TickNonce || !m.ticking() && j.PausedUntil.IsZero() {
		return nil
	}
	if e.Start {
		defer m.startHere(len(m.Actions), e.Nonce)
	}
	if m.Now.Before(j.TickAt) { // early: the queue's clock runs ahead of ours
		m.tickAt(j.TickAt)
		return nil
	}
	if j.State == Paused { // the tick of a pause's end, or a hop toward it
		if m.Now.Before(j.PausedUntil) {
			m.tickAt(j.PausedUntil)
		} else {
			m.resume()
		}
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
		m.fireInterval()
		return nil
	}
	m.catchUp(max(m.Policy.CatchupWindow, m.Config.LateTolerance), SkipMissed)
	j.Cursor = m.Now
	m.planNext()
	return nil
}

// fireInterval admits an interval job's occurrence, which is due, and
// plans the next one: an interval has no fixed occurrences, so there is
// nothing before it to catch up on.
func (m *Machine) fireInterval() {
	j := &m.Job
	// Read the occurrence before clearTick zeroes NextAt; the other order
	// recorded every interval occurrence at the zero time, all under one
	// invocation id.
	o := j.NextAt
	m.clearTick()
	j.Cursor = o
	if m.fromBackup(o) {
		m.skipOne(Occurrence{ID: OccurrenceID(o), At: o}, SkipMissed)
	} else {
		m.admit(Occurrence{ID: OccurrenceID(o), At: o})
	}
	m.planNext()
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
		_ = m.onStarting(Starting{Invocation: a.Invocation, Attempt: a.Attempt, Nonce: nonce})
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

// catchUp accounts for the occurrences in (Cursor, Now]: the latest runs if
// it is at most window late, the others are recorded as skipped: tooOld
// beyond the window, superseded within it.
func (m *Machine) catchUp(window time.Duration, tooOld SkipReason) {
	if m.capped() {
		return // past its cap the job has no occurrences to account for
	}
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
	m.recordCalendar()
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

// recordGaps records the fire times that DST gaps in (Cursor, Now]
// swallowed under gap: skip, one record per gap.
func (m *Machine) recordGaps() {
	for at, n := range m.Schedule.GapSkipped(m.Job.Cursor.Add(time.Nanosecond), m.Now.Add(time.Nanosecond)) {
		m.emit(RecordSkipped{ID: GapID(at), First: at, Last: at, Count: n, Reason: SkipDSTGap})
	}
}

// recordCalendar records the fire times in (Cursor, Now] that the job's
// calendars removed, one record per run of them removed for one cause:
// the occurrences of a holiday, of a weekend.
func (m *Machine) recordCalendar() {
	var s RecordSkipped
	for at, why := range m.Schedule.CalendarSkipped(m.Job.Cursor.Add(time.Nanosecond), m.Now.Add(time.Nanosecond)) {
		if s.Count > 0 && s.Note == why {
			s.Last = at
			s.Count++
			continue
		}
		if s.Count > 0 {
			m.emit(s)
		}
		s = RecordSkipped{ID: OccurrenceID(at), First: at, Last: at, Count: 1, Reason: SkipCalendar, Note: why}
	}
	if s.Count > 0 {
		m.emit(s)
	}
}

// capped reports whether the job has had the runs its cap allows: past
// its cap a job has no occurrences.
func (m *Machine) capped() bool {
	left, capped := RunsLeft(m.Job, m.Policy)
	return capped && left == 0
}

// RunsLeft says how many more scheduled occurrences the job's cap on runs
// (Policy.MaxRuns) lets become invocations, counting the scheduled
// occurrence that waits for a slot as one: it will run. capped is false
// when the policy has no cap.
func RunsLeft(j JobState, p Policy) (left int64, capped bool) {
	if p.MaxRuns == 0 {
		return 0, false
	}
	n := j.Runs
	if o := j.Pending; o != nil && !o.Manual && !o.Backfill {
		n++
	}
	return max(p.MaxRuns-n, 0), true
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

// planNext schedules the tick for the next occurrence after Cursor (after
// the end of the last invocation, for an interval), if there is one and the
// job is ticking. An interval job that has an unfinished invocation waits
// for its end.
func (m *Machine) planNext() {
	j := &m.Job
	m.clearTick()
	if !m.ticking() || m.capped() {
		return
	}
	from := j.Cursor
	if iv := m.Schedule.Interval(); iv > 0 {
		if len(j.Active) > 0 {
			return
		}
		// Never in the past: a tick already due would have its watchdog
		// timer passed before it was ever posted.
		from = later(later(j.Cursor, j.LastEnded), m.Now.Add(-iv))
	}
	next, ok := m.Schedule.Next(from)
	if !ok {
		return
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

func (m *Machine) jitter(at time.Time) time.Duration {
	return Jitter(m.JobID, at, m.Policy.Jitter)
}

// Jitter is the delay of the occurrence at `at` of job jobID: a stable hash
// of both below max, in whole milliseconds, so a late launch can always be
// told from a jittered one.
func Jitter(jobID string, at time.Time, max time.Duration) time.Duration {
	ms := uint64(max / time.Millisecond)
	if ms == 0 {
		return 0
	}
	// FNV-1a of the job id and the occurrence id, hashed in place: the
	// load forecast asks this of every launch of a day of jobs.
	var buf [len(occurrenceLayout) + 8]byte
	h := uint64(fnvOffset)
	for i := range len(jobID) {
		h = (h ^ uint64(jobID[i])) * fnvPrime
	}
	for _, b := range at.UTC().AppendFormat(buf[:0], occurrenceLayout) {
		h = (h ^ uint64(b)) * fnvPrime
	}
	return time.Duration(h%ms) * time.Millisecond
}

// FNV-1a's 64-bit parameters (hash/fnv).
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)
