package statemachine

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// onStarting launches the attempt whose StartInvocation was delivered. A
// task is delivered at least once, late or early, so each carries the
// nonce it expects: a stale one does nothing (invariant 6), and one that
// comes before the backoff has passed waits for it again. An attempt of
// an occurrence a restored backup held may have launched after the backup
// was taken, and is aborted rather than risk launching twice. A task for an
// attempt LAUNCHING already is the same task delivered again.
func (m *Machine) onStarting(e Starting) error {
	j := &m.Job
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
	return nil
}

// onLaunched records that the target accepted a LAUNCHING attempt and runs
// it on its own: it is RUNNING, and since the target will not call back
// within the launch, its end comes by a push or by the polls planned from
// here (none when Config.MinPoll is 0). A report that comes late or twice
// finds the attempt past LAUNCHING, and does nothing.
func (m *Machine) onLaunched(e Launched) {
	j := &m.Job
	if i := m.find(e.Invocation, e.Attempt); i >= 0 && j.Active[i].Status == StatusLaunching {
		j.Active[i].Status = StatusRunning
		m.record(j.Active[i], StatusRunning, e.Message)
		if m.Config.MinPoll > 0 {
			m.pollAt(i, m.Now.Add(m.pollWait(j.Active[i])))
		}
	}
}

// onPollDue asks the target how a RUNNING attempt is doing (Check), in
// case its push was lost, and plans the next poll further apart
// (pollWait). A poll with a stale nonce does nothing; one that comes
// early, by the queue's clock, waits again.
func (m *Machine) onPollDue(e PollDue) {
	j := &m.Job
	i := m.find(e.Invocation, e.Attempt)
	if i < 0 || j.Active[i].Status != StatusRunning || e.Nonce == 0 || j.Active[i].PollNonce != e.Nonce {
		return
	}
	inv := &j.Active[i]
	if m.Now.Before(inv.PollAt) { // early: the queue's clock runs ahead of ours
		m.pollAt(i, inv.PollAt)
		return
	}
	m.emit(Check{Invocation: inv.ID, Attempt: inv.Attempt})
	m.pollAt(i, m.Now.Add(m.pollWait(*inv)))
}

// onEnded records how a launched attempt ended; a failure is retried as
// the policy allows. A push and a poll may both report the same end, so
// an end of an attempt that is no longer launched does nothing.
func (m *Machine) onEnded(e Ended) {
	j := &m.Job
	i := m.find(e.Invocation, e.Attempt)
	if i < 0 || !launched(j.Active[i].Status) {
		return
	}
	if e.Succeeded {
		m.end(i, StatusSucceeded, e.Message)
	} else {
		m.fail(i, e.Message, true)
	}
	m.afterEnd()
}

// onNotLaunched launches again an attempt whose launch was in doubt: asked
// by the idempotency key, the target says it never received it, so a
// launch now is the first (invariant 1).
func (m *Machine) onNotLaunched(e NotLaunched) {
	if i := m.find(e.Invocation, e.Attempt); i >= 0 && m.Job.Active[i].Status == StatusLaunching {
		m.launch(i, "the target never received the launch; launching it now")
	}
}

// onOutcomeUnknown fails closed on a launch that may or may not have
// happened (invariant 3).
func (m *Machine) onOutcomeUnknown(e OutcomeUnknown) {
	i := m.find(e.Invocation, e.Attempt)
	if i < 0 || m.Job.Active[i].Status != StatusLaunching {
		return
	}
	// A launch of unknown outcome is an attempt made: retried only
	// for an idempotent target, and only as the next attempt, so
	// max_attempts and the backoff bound a launch that kills the
	// server (before, it was made again as the same attempt at every
	// start, without end); a DISABLED job retries nothing.
	m.fail(i, "launch outcome unknown", m.Policy.Idempotent)
	m.afterEnd()
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

func (m *Machine) hardTimeout() time.Duration {
	t := m.Policy.Timeout
	if t <= 0 {
		t = m.Config.DefaultTimeout
	}
	return t + m.Config.KillGrace
}

func launched(p Status) bool { return p == StatusLaunching || p == StatusRunning }
