package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/statemachine"
)

// The job state's stored form. Its JSON names are a format that every
// stored job is in: never rename or reuse one. A change that an older
// release could not read correctly gets a new version, and decodeJobState
// keeps reading every older one; testdata/ pins each version.
const stateVersion = 1

// storedState is version 1 of a job's stored state. decodeJobState reads
// it with encoding/json; appendState writes it by hand, and a field added
// here must be added there too (TestTheStateEncoderWritesWhatEncodingJSONWrites
// fails until it is).
type storedState struct {
	Version   int                `json:"v"`
	State     string             `json:"state"`
	Reason    *storedReason      `json:"reason,omitempty"`
	TickNonce int64              `json:"tick_nonce,omitempty"`
	TickAt    time.Time          `json:"tick_at,omitzero"`
	NextAt    time.Time          `json:"next_at,omitzero"`
	Cursor    time.Time          `json:"cursor,omitzero"`
	Pending   *storedOccurrence  `json:"pending,omitempty"`
	Active    []storedInvocation `json:"active,omitempty"`
	Failures  int                `json:"failures,omitempty"`
	Triggers  int64              `json:"triggers,omitempty"`
	LastEnded time.Time          `json:"last_ended,omitzero"`
	Watchdog  time.Time          `json:"watchdog_timer_ts,omitzero"`
	Health    *storedHealth      `json:"health,omitempty"`
	// Audit was added within version 1: left out while empty, so the
	// bytes of a job no one steered are what they were, and a release
	// before it reads the rest and drops the trail.
	Audit []storedAudit `json:"audit,omitempty"`
	// Backfill was added within version 1, as the poll fields were: left
	// out when no backfill is under way, and a release before it reads the
	// rest and drops the backfill, whose unstarted occurrences then have
	// no record and may be backfilled again.
	Backfill *storedBackfill `json:"backfill,omitempty"`
	// Runs and PausedUntil were added within version 1, left out while
	// zero: the bytes of a job with no cap on its runs and no pause with
	// an end are what they were. A release before them drops them: it
	// knows no cap to count for, and a pause it finds lasts until someone
	// resumes the job.
	Runs        int64     `json:"runs,omitempty"`
	PausedUntil time.Time `json:"paused_until,omitzero"`
}

type storedBackfill struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	Next time.Time `json:"next"`
}

type storedAudit struct {
	At         time.Time `json:"at"`
	By         string    `json:"by"`
	Action     string    `json:"action"`
	Invocation string    `json:"invocation,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	// Until was added within version 1: a pause's end, if it has one.
	Until time.Time `json:"until,omitzero"`
}

type storedReason struct {
	Kind string `json:"kind"`
	Note string `json:"note,omitempty"`
}

type storedOccurrence struct {
	ID     string    `json:"id"`
	At     time.Time `json:"at"`
	Manual bool      `json:"manual,omitempty"`
	// Backfill was added within version 1 (see storedState.Backfill).
	Backfill bool `json:"backfill,omitempty"`
}

type storedInvocation struct {
	storedOccurrence
	Attempt  int       `json:"attempt"`
	Status   string    `json:"status"`
	Nonce    int64     `json:"nonce,omitempty"`
	Since    time.Time `json:"since,omitzero"`
	RetryAt  time.Time `json:"retry_at,omitzero"`
	Deadline time.Time `json:"deadline,omitzero"`
	// PollNonce and PollAt were added within version 1: only a RUNNING
	// attempt has them, and a release before them reads the rest and
	// leaves the attempt to its hard timeout, as it did.
	PollNonce int64     `json:"poll_nonce,omitempty"`
	PollAt    time.Time `json:"poll_at,omitzero"`
}

type storedHealth struct {
	TaskFailures int       `json:"task_failures,omitempty"`
	LastError    string    `json:"last_error,omitempty"`
	LastErrorAt  time.Time `json:"last_error_at,omitzero"`
}

// encodeJobState returns a job state's stored form, as appendState writes
// it; encoding/json writes what it cannot.
func encodeJobState(s jobState) ([]byte, error) {
	// 320 bytes hold the state of a job with no invocation running and
	// none steering it, the most common, in one allocation.
	if b, ok := appendState(make([]byte, 0, 320), s); ok {
		return b, nil
	}
	return marshalStoredState(s)
}

// marshalStoredState is the stored form as encoding/json writes it, which
// appendState must match byte for byte.
func marshalStoredState(s jobState) ([]byte, error) {
	m := s.m
	out := storedState{
		Version: stateVersion, State: string(m.State),
		TickNonce: m.TickNonce, TickAt: m.TickAt, NextAt: m.NextAt, Cursor: m.Cursor,
		Failures: m.Failures, Triggers: m.Triggers, LastEnded: m.LastEnded, Watchdog: m.WatchdogTimerTs,
		Runs: m.Runs, PausedUntil: m.PausedUntil,
	}
	if m.Reason != (statemachine.Reason{}) {
		out.Reason = &storedReason{Kind: string(m.Reason.Kind), Note: m.Reason.Note}
	}
	if m.Pending != nil {
		o := storeOccurrence(*m.Pending)
		out.Pending = &o
	}
	if b := m.Backfill; b != nil {
		out.Backfill = &storedBackfill{From: b.From, To: b.To, Next: b.Next}
	}
	for _, inv := range m.Active {
		out.Active = append(out.Active, storedInvocation{
			storedOccurrence: storeOccurrence(inv.Occurrence),
			Attempt:          inv.Attempt, Status: string(inv.Status), Nonce: inv.Nonce,
			Since: inv.Since, RetryAt: inv.RetryAt, Deadline: inv.Deadline,
			PollNonce: inv.PollNonce, PollAt: inv.PollAt,
		})
	}
	if s.health != (Health{}) {
		out.Health = &storedHealth{TaskFailures: s.health.TaskFailures, LastError: s.health.LastError, LastErrorAt: s.health.LastErrorAt}
	}
	for _, a := range s.audit {
		out.Audit = append(out.Audit, storedAudit{At: a.At, By: string(a.By), Action: string(a.Action), Invocation: a.Invocation, Reason: a.Reason, Until: a.Until})
	}
	return json.Marshal(out)
}

func storeOccurrence(o statemachine.Occurrence) storedOccurrence {
	return storedOccurrence{ID: o.ID, At: o.At, Manual: o.Manual, Backfill: o.Backfill}
}

func (o storedOccurrence) occurrence() statemachine.Occurrence {
	return statemachine.Occurrence{ID: o.ID, At: o.At, Manual: o.Manual, Backfill: o.Backfill}
}

// decodeJobState reads any version of the stored state.
func decodeJobState(b []byte) (jobState, error) {
	// As decodeDefinition: the version this release writes is decoded at
	// once, and a record of it that fails fails with that decode's error.
	var in storedState
	whole := json.Unmarshal(b, &in)
	if whole == nil && in.Version == stateVersion {
		return in.jobState(), nil
	}
	var v struct {
		Version *int `json:"v"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return jobState{}, err
	}
	switch {
	case v.Version == nil:
		return decodeJobStateV0(b)
	case *v.Version == stateVersion:
		return jobState{}, whole
	}
	return jobState{}, fmt.Errorf("version %d: this release reads versions 0 to %d", *v.Version, stateVersion)
}

// jobState is what the stored state says, in the engine's terms. Every
// older version is first brought to this shape, so this is the one
// conversion there is.
func (in storedState) jobState() jobState {
	m := statemachine.JobState{
		State:     statemachine.State(in.State),
		TickNonce: in.TickNonce, TickAt: in.TickAt, NextAt: in.NextAt, Cursor: in.Cursor,
		Failures: in.Failures, Triggers: in.Triggers, LastEnded: in.LastEnded, WatchdogTimerTs: in.Watchdog,
		Runs: in.Runs, PausedUntil: in.PausedUntil,
	}
	if in.Reason != nil {
		m.Reason = statemachine.Reason{Kind: statemachine.ReasonKind(in.Reason.Kind), Note: in.Reason.Note}
	}
	if in.Pending != nil {
		o := in.Pending.occurrence()
		m.Pending = &o
	}
	if b := in.Backfill; b != nil {
		m.Backfill = &statemachine.Backfill{From: b.From, To: b.To, Next: b.Next}
	}
	for _, inv := range in.Active {
		m.Active = append(m.Active, statemachine.Invocation{
			Occurrence: inv.occurrence(), Attempt: inv.Attempt, Status: statemachine.Status(inv.Status), Nonce: inv.Nonce,
			Since: inv.Since, RetryAt: inv.RetryAt, Deadline: inv.Deadline,
			PollNonce: inv.PollNonce, PollAt: inv.PollAt,
		})
	}
	s := jobState{m: m}
	if h := in.Health; h != nil {
		s.health = Health{TaskFailures: h.TaskFailures, LastError: h.LastError, LastErrorAt: h.LastErrorAt}
	}
	for _, a := range in.Audit {
		s.audit = append(s.audit, AuditEntry{At: a.At, By: access.Identity(a.By), Action: Action(a.Action), Invocation: a.Invocation, Reason: a.Reason, Until: a.Until})
	}
	return s
}

// stateV0 is what releases up to 313afd2 stored: json.Marshal of
// statemachine.JobState (then named Job), with Go's field names, no
// version, and the reason in words. Frozen: statemachine.JobState may
// change, this may not.
type stateV0 struct {
	State           string
	Reason          string
	TickNonce       int64
	TickAt          time.Time
	NextAt          time.Time
	Cursor          time.Time
	Pending         *occurrenceV0
	Active          []invocationV0
	Failures        int
	Triggers        int64
	LastEnded       time.Time
	WatchdogTimerTs time.Time
}

type occurrenceV0 struct {
	ID     string
	At     time.Time
	Manual bool
}

type invocationV0 struct {
	occurrenceV0
	Attempt  int
	Phase    string // the same words as statemachine.Status's
	Nonce    int64
	Since    time.Time
	RetryAt  time.Time
	Deadline time.Time
}

func (o occurrenceV0) upgrade() storedOccurrence {
	return storedOccurrence{ID: o.ID, At: o.At, Manual: o.Manual}
}

// Version 0's reasons, as 313afd2's config importer and machine wrote them.
const (
	reasonV0Removed      = "removed from config"
	reasonV0Disabled     = "disabled in config"
	reasonV0AutoDisabled = "auto-disabled " // + "after N failed invocations in a row"
)

func decodeJobStateV0(b []byte) (jobState, error) {
	var in stateV0
	if err := json.Unmarshal(b, &in); err != nil {
		return jobState{}, err
	}
	return in.upgrade().jobState(), nil
}

// upgrade is the version 1 shape of a version 0 state: the same fields
// under their stored names, the reason typed, and no health (version 0
// kept none).
func (in stateV0) upgrade() storedState {
	out := storedState{
		Version: stateVersion, State: in.State,
		TickNonce: in.TickNonce, TickAt: in.TickAt, NextAt: in.NextAt, Cursor: in.Cursor,
		Failures: in.Failures, Triggers: in.Triggers, LastEnded: in.LastEnded, Watchdog: in.WatchdogTimerTs,
	}
	if r := reasonFromV0(statemachine.State(in.State), in.Reason); r != (statemachine.Reason{}) {
		out.Reason = &storedReason{Kind: string(r.Kind), Note: r.Note}
	}
	if in.Pending != nil {
		o := in.Pending.upgrade()
		out.Pending = &o
	}
	for _, inv := range in.Active {
		out.Active = append(out.Active, storedInvocation{
			storedOccurrence: inv.upgrade(), Attempt: inv.Attempt, Status: inv.Phase, Nonce: inv.Nonce,
			Since: inv.Since, RetryAt: inv.RetryAt, Deadline: inv.Deadline,
		})
	}
	return out
}

// reasonFromV0 types a version 0 reason. Only PAUSED and DISABLED jobs have
// one: 313afd2 cleared it on leaving them.
func reasonFromV0(state statemachine.State, words string) statemachine.Reason {
	switch state {
	case statemachine.Paused:
		return statemachine.Reason{Kind: statemachine.ReasonPaused, Note: words}
	case statemachine.Disabled:
		switch {
		case words == reasonV0Removed:
			return statemachine.Reason{Kind: statemachine.ReasonRemovedFromConfig}
		case words == reasonV0Disabled:
			return statemachine.Reason{Kind: statemachine.ReasonDisabledInConfig}
		case strings.HasPrefix(words, reasonV0AutoDisabled):
			return statemachine.Reason{Kind: statemachine.ReasonAutoDisabled, Note: strings.TrimPrefix(words, reasonV0AutoDisabled)}
		}
		return statemachine.Reason{Kind: statemachine.ReasonUntyped, Note: words}
	}
	return statemachine.Reason{}
}
