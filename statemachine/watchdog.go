package statemachine

import "fmt"

// onWatchdogExpired repairs what the job waits for past its time (the
// watchdog found its WatchdogTimerTs passed): a task lost, purged or
// failed is issued again (invariant 4: no job is stuck), and an attempt
// that overran its hard timeout ends.
func (m *Machine) onWatchdogExpired() {
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
