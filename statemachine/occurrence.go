package statemachine

import (
	"strconv"
	"strings"
	"time"
)

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
	if m.Policy.MaxRuns > 0 && !o.Manual && !o.Backfill {
		m.Job.Runs++
	}
	m.Job.Active = append(m.Job.Active, inv)
	i := len(m.Job.Active) - 1
	m.record(inv, StatusQueued, "")
	m.startAt(i, m.Now)
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

// OccurrenceID is the invocation id of a scheduled occurrence: its time in
// UTC, so the same occurrence always gets the same id, and a second
// invocation of it is impossible to create by mistake.
func OccurrenceID(at time.Time) string {
	return at.UTC().Format(occurrenceLayout)
}

const occurrenceLayout = "20060102T150405.999999999Z"

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
