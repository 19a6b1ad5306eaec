package engine

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/sundial-cron/sundial/statemachine"
)

// appendState appends a job's stored state, version 1, to b: byte for byte
// what encoding/json makes of storedState, written field by field instead
// of by reflection. Every transaction of a job encodes its state, and
// encoding/json's reflection, and its boxing of every time to ask whether
// it is zero, were 7 % of an instance's CPU at 100,000 jobs
// (docs/benchmarks.md, "The job state's encoder"). ok is false where a
// time has no RFC 3339 form (a year past 9999): encodeJobState then
// leaves the state to encoding/json, for its error.
// TestTheStateEncoderWritesWhatEncodingJSONWrites holds the two to the
// same bytes.
func appendState(b []byte, s jobState) (_ []byte, ok bool) {
	m := &s.m
	w := stateWriter{b: b}
	w.open()
	w.int("v", stateVersion)
	w.str("state", string(m.State))
	if m.Reason != (statemachine.Reason{}) {
		w.key("reason")
		w.open()
		w.str("kind", string(m.Reason.Kind))
		w.strOmit("note", m.Reason.Note)
		w.close()
	}
	w.intOmit("tick_nonce", m.TickNonce)
	w.timeOmit("tick_at", m.TickAt)
	w.timeOmit("next_at", m.NextAt)
	w.timeOmit("cursor", m.Cursor)
	if m.Pending != nil {
		w.key("pending")
		w.open()
		w.occurrence(*m.Pending)
		w.close()
	}
	if len(m.Active) > 0 {
		w.array("active", len(m.Active), func(i int) {
			inv := &m.Active[i]
			w.occurrence(inv.Occurrence)
			w.int("attempt", int64(inv.Attempt))
			w.str("status", string(inv.Status))
			w.intOmit("nonce", inv.Nonce)
			w.timeOmit("since", inv.Since)
			w.timeOmit("retry_at", inv.RetryAt)
			w.timeOmit("deadline", inv.Deadline)
			w.intOmit("poll_nonce", inv.PollNonce)
			w.timeOmit("poll_at", inv.PollAt)
		})
	}
	w.intOmit("failures", int64(m.Failures))
	w.intOmit("triggers", m.Triggers)
	w.timeOmit("last_ended", m.LastEnded)
	w.timeOmit("watchdog_timer_ts", m.WatchdogTimerTs)
	if h := s.health; h != (Health{}) {
		w.key("health")
		w.open()
		w.intOmit("task_failures", int64(h.TaskFailures))
		w.strOmit("last_error", h.LastError)
		w.timeOmit("last_error_at", h.LastErrorAt)
		w.close()
	}
	if len(s.audit) > 0 {
		w.array("audit", len(s.audit), func(i int) {
			a := &s.audit[i]
			w.time("at", a.At)
			w.str("by", string(a.By))
			w.str("action", string(a.Action))
			w.strOmit("invocation", a.Invocation)
			w.strOmit("reason", a.Reason)
			w.timeOmit("until", a.Until)
		})
	}
	if bf := m.Backfill; bf != nil {
		w.key("backfill")
		w.open()
		w.time("from", bf.From)
		w.time("to", bf.To)
		w.time("next", bf.Next)
		w.close()
	}
	w.intOmit("runs", m.Runs)
	w.timeOmit("paused_until", m.PausedUntil)
	w.close()
	return w.b, !w.bad
}

// stateWriter appends a JSON object's fields as encoding/json writes a
// struct's: in order, comma-separated, with omitempty's and omitzero's
// zero values left out.
type stateWriter struct {
	b []byte
	// more is whether the object being written has a field already.
	more bool
	// bad is set by a time with no RFC 3339 form.
	bad bool
}

func (w *stateWriter) open() {
	w.b = append(w.b, '{')
	w.more = false
}

// close ends an object, which is itself a field or an element of the one
// around it, which therefore has one.
func (w *stateWriter) close() {
	w.b = append(w.b, '}')
	w.more = true
}

// array writes n objects, each's fields written by fields(i).
func (w *stateWriter) array(k string, n int, fields func(i int)) {
	w.key(k)
	w.b = append(w.b, '[')
	for i := range n {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.open()
		fields(i)
		w.close()
	}
	w.b = append(w.b, ']')
}

func (w *stateWriter) key(k string) {
	if w.more {
		w.b = append(w.b, ',')
	}
	w.more = true
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

func (w *stateWriter) occurrence(o statemachine.Occurrence) {
	w.str("id", o.ID)
	w.time("at", o.At)
	if o.Manual {
		w.key("manual")
		w.b = append(w.b, "true"...)
	}
	if o.Backfill {
		w.key("backfill")
		w.b = append(w.b, "true"...)
	}
}

func (w *stateWriter) int(k string, v int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}

func (w *stateWriter) intOmit(k string, v int64) {
	if v != 0 {
		w.int(k, v)
	}
}

func (w *stateWriter) str(k, v string) {
	w.key(k)
	w.b = appendJSONString(w.b, v)
}

func (w *stateWriter) strOmit(k, v string) {
	if v != "" {
		w.str(k, v)
	}
}

func (w *stateWriter) time(k string, t time.Time) {
	w.key(k)
	w.b = append(w.b, '"')
	var err error
	if w.b, err = t.AppendText(w.b); err != nil {
		w.bad = true
	}
	w.b = append(w.b, '"')
}

func (w *stateWriter) timeOmit(k string, t time.Time) {
	if !t.IsZero() {
		w.time(k, t)
	}
}

// appendJSONString appends s quoted as encoding/json quotes it. The words
// of a state (ids, statuses, kinds, identities) are plain ASCII, written
// as they are; any other string goes to encoding/json, whose escaping
// (of HTML's <, > and &, of U+2028 and U+2029, of invalid UTF-8) is then
// its own.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
