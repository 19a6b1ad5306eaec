package statemachine

import (
	"fmt"
	"time"
)

// onTriggered makes an occurrence of now, which the overlap policy admits
// as it would a scheduled one. A DISABLED job starts nothing new, and says
// so to whoever asked rather than recording a run that never comes.
func (m *Machine) onTriggered() error {
	j := &m.Job
	if j.State == Disabled {
		return fmt.Errorf("%w: the job is disabled (%s)", ErrRefused, j.Reason)
	}
	j.Triggers++
	m.admit(Occurrence{ID: TriggerID(j.Triggers), At: m.Now, Manual: true})
	return nil
}

// onPauseRequested stops the job's ticks, with the pauser's note as its
// reason, until a resume or the pause's end (Until), when a tick resumes
// it. The occurrence pending a free slot is recorded as skipped rather
// than kept for a resume that may never come; invocations under way
// finish. A second pause keeps the first note and end, unless it asks to
// renote the job; a DISABLED job cannot be paused, nor can a pause end
// before it starts, and the refusal says why.
func (m *Machine) onPauseRequested(e PauseRequested) error {
	j := &m.Job
	switch {
	case j.State == Disabled:
		return fmt.Errorf("%w: the job is disabled (%s)", ErrRefused, j.Reason)
	case !e.Until.IsZero() && !e.Until.After(m.Now):
		return fmt.Errorf("%w: the pause would end at %s, which is not after now (%s)", ErrRefused, e.Until.Format(time.RFC3339), m.Now.Format(time.RFC3339))
	case j.State == Paused:
		if !e.Renote {
			return nil
		}
		j.Reason.Note = e.Note
		if !e.Until.Equal(j.PausedUntil) {
			m.pauseUntil(e.Until)
		}
		return nil
	}
	j.State, j.Reason = Paused, Reason{Kind: ReasonPaused, Note: e.Note}
	m.dropPending(SkipPaused)
	m.pauseUntil(e.Until)
	return nil
}

// pauseUntil ends the pause at until, by a tick then; zero: only a resume
// ends it.
func (m *Machine) pauseUntil(until time.Time) {
	m.clearTick()
	m.Job.PausedUntil = until
	if !until.IsZero() {
		m.tickAt(until)
	}
}

// onResumeRequested ticks a PAUSED job again. What fell due in the pause
// runs only as far as the catch-up window brings it back (the latest
// occurrence, once), and the rest is recorded as skipped (paused): those
// are the runs the pause was asked for. A job not PAUSED is left as it
// is, so a resume delivered twice does nothing the second time.
func (m *Machine) onResumeRequested() {
	if m.Job.State != Paused {
		return
	}
	m.resume()
}

// resume ends a pause, asked for or at its end.
func (m *Machine) resume() {
	j := &m.Job
	j.State, j.Reason, j.PausedUntil = Scheduled, Reason{}, time.Time{}
	if m.Schedule.Interval() == 0 {
		// Only the catch-up window brings back what fell in the pause.
		m.catchUp(m.Policy.CatchupWindow, SkipPaused)
	}
	// An interval counts again from the resume: the pause does not
	// leave a run owed.
	j.Cursor = later(j.Cursor, m.Now)
	m.planNext()
}

// onAbortRequested ends the named invocation, or every unfinished one, as
// ABORTED, and tells the target to stop those that may be running; the
// slots it frees then take what waits for them (afterEnd). Naming an
// invocation that has ended is refused: the admin's abort did nothing.
func (m *Machine) onAbortRequested(e AbortRequested) error {
	j := &m.Job
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
	return nil
}
