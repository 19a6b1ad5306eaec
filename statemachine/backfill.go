package statemachine

import (
	"fmt"
	"slices"
	"time"
)

// onBackfillRequested starts a backfill of [e.From, e.To), cut at the
// Cursor: what comes after it is the schedule's own to run, and running it
// here too would run it twice. A request the job cannot honour is refused
// with the reason, so the admin knows nothing was started: a DISABLED job,
// a schedule with no fixed occurrences, an empty range, or a backfill
// already under way (one at a time keeps the job's slots for its ticks).
func (m *Machine) onBackfillRequested(e BackfillRequested) error {
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
	// A range the schedule never fires in (any range of a triggered
	// job's) would run nothing: refused, rather than accepted and audited
	// as if it did something.
	if !firesIn(m.Schedule, e.From, to) {
		return fmt.Errorf("%w: the job's schedule fires at no time in [%s, %s): there is nothing to backfill", ErrRefused,
			e.From.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
	}
	j.Backfill = &Backfill{From: e.From, To: to, Next: e.From}
	return nil
}

// firesIn reports whether s fires at some time in [from, to).
func firesIn(s Schedule, from, to time.Time) bool {
	for range s.Between(from, to) {
		return true
	}
	return false
}

// onBackfillCanceled stops the backfill under way; what it had not started
// is simply not started (see BackfillCanceled). With none under way the
// request is refused, so the admin is not told of a cancel that did
// nothing.
func (m *Machine) onBackfillCanceled() error {
	if m.Job.Backfill == nil {
		return fmt.Errorf("%w: no backfill is under way", ErrRefused)
	}
	m.Job.Backfill = nil
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
