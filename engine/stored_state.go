package engine

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/sundial-cron/sundial/statemachine"
)

// The job state's stored form. Its JSON names are a format that every
// stored job is in: never rename or reuse one. A change that an older
// release could not read correctly gets a new version, and decodeJobState
// keeps reading every older one; testdata/ pins each version.
const stateVersion = 1

// storedState is version 1 of a job's stored state.
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
}

type storedReason struct {
	Kind string `json:"kind"`
	Note string `json:"note,omitempty"`
}

type storedOccurrence struct {
	ID     string    `json:"id"`
	At     time.Time `json:"at"`
	Manual bool      `json:"manual,omitempty"`
}

type storedInvocation struct {
	storedOccurrence
	Attempt  int       `json:"attempt"`
	Status   string    `json:"status"`
	Nonce    int64     `json:"nonce,omitempty"`
	Since    time.Time `json:"since,omitzero"`
	RetryAt  time.Time `json:"retry_at,omitzero"`
	Deadline time.Time `json:"deadline,omitzero"`
}

type storedHealth struct {
	TaskFailures int       `json:"task_failures,omitempty"`
	LastError    string    `json:"last_error,omitempty"`
	LastErrorAt  time.Time `json:"last_error_at,omitzero"`
}

func encodeJobState(s jobState) ([]byte, error) {
	m := s.m
	out := storedState{
		Version: stateVersion, State: string(m.State),
		TickNonce: m.TickNonce, TickAt: m.TickAt, NextAt: m.NextAt, Cursor: m.Cursor,
		Failures: m.Failures, Triggers: m.Triggers, LastEnded: m.LastEnded, Watchdog: m.WatchdogTimerTs,
	}
	if m.Reason != (statemachine.Reason{}) {
		out.Reason = &storedReason{Kind: string(m.Reason.Kind), Note: m.Reason.Note}
	}
	if m.Pending != nil {
		o := storeOccurrence(*m.Pending)
		out.Pending = &o
	}
	for _, inv := range m.Active {
		out.Active = append(out.Active, storedInvocation{
			storedOccurrence: storeOccurrence(inv.Occurrence),
			Attempt:          inv.Attempt, Status: string(inv.Phase), Nonce: inv.Nonce,
			Since: inv.Since, RetryAt: inv.RetryAt, Deadline: inv.Deadline,
		})
	}
	if s.health != (Health{}) {
		out.Health = &storedHealth{TaskFailures: s.health.TaskFailures, LastError: s.health.LastError, LastErrorAt: s.health.LastErrorAt}
	}
	return json.Marshal(out)
}

func storeOccurrence(o statemachine.Occurrence) storedOccurrence {
	return storedOccurrence{ID: o.ID, At: o.At, Manual: o.Manual}
}

func (o storedOccurrence) occurrence() statemachine.Occurrence {
	return statemachine.Occurrence{ID: o.ID, At: o.At, Manual: o.Manual}
}

// decodeJobState reads any version of the stored state.
func decodeJobState(b []byte) (jobState, error) {
	var v struct {
		Version int `json:"v"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return jobState{}, err
	}
	if v.Version != stateVersion {
		return jobState{}, fmt.Errorf("version %d: this release reads version %d", v.Version, stateVersion)
	}
	var in storedState
	if err := json.Unmarshal(b, &in); err != nil {
		return jobState{}, err
	}
	m := statemachine.Job{
		State:     statemachine.State(in.State),
		TickNonce: in.TickNonce, TickAt: in.TickAt, NextAt: in.NextAt, Cursor: in.Cursor,
		Failures: in.Failures, Triggers: in.Triggers, LastEnded: in.LastEnded, WatchdogTimerTs: in.Watchdog,
	}
	if in.Reason != nil {
		m.Reason = statemachine.Reason{Kind: statemachine.ReasonKind(in.Reason.Kind), Note: in.Reason.Note}
	}
	if in.Pending != nil {
		o := in.Pending.occurrence()
		m.Pending = &o
	}
	for _, inv := range in.Active {
		m.Active = append(m.Active, statemachine.Invocation{
			Occurrence: inv.occurrence(), Attempt: inv.Attempt, Phase: statemachine.Phase(inv.Status), Nonce: inv.Nonce,
			Since: inv.Since, RetryAt: inv.RetryAt, Deadline: inv.Deadline,
		})
	}
	s := jobState{m: m}
	if h := in.Health; h != nil {
		s.health = Health{TaskFailures: h.TaskFailures, LastError: h.LastError, LastErrorAt: h.LastErrorAt}
	}
	return s, nil
}
