package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// Health is the engine's record of a job's trouble: how many deliveries of
// its tasks in a row failed with a transient error, and the last error.
// Zero while all is well.
type Health struct {
	TaskFailures int
	LastError    string
	LastErrorAt  time.Time
}

// jobState is what the engine keeps in store.JobRecord.EncodedState: the machine's
// state and the job's health.
type jobState struct {
	m      statemachine.JobState
	health Health
	audit  []AuditEntry // oldest first, at most MaxAudit
}

func (s jobState) clone() jobState {
	s.m = s.m.Clone()
	s.audit = slices.Clone(s.audit)
	return s
}

// State decodes the state machine's state stored in a job.
func State(job *store.JobRecord) (statemachine.JobState, error) {
	s, err := decodeState(job)
	return s.m, err
}

func decodeState(job *store.JobRecord) (jobState, error) {
	s, err := decodeJobState(job.EncodedState)
	if err != nil {
		wrapped := fmt.Errorf("job %s: stored state: %w", job.ID, err)
		if newerVersion(job.EncodedState, stateVersion) {
			return s, wrapped
		}
		return s, permanent(statemachine.ReasonStateUnreadable, err, wrapped)
	}
	return s, nil
}
