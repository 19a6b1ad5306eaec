package engine

import (
	"reflect"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// The engine's cache answers only for the bytes its entry was made from:
// not with a definition the job no longer has.
func TestJobCacheAnswersOnlyForItsBytes(t *testing.T) {
	t.Parallel()
	var c jobCache
	defBytes := func(sched string) []byte {
		b, err := encodeDefinition(Definition{Schedule: sched, Target: "noop"})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	old, cur := defBytes("*/5 * * * *"), defBytes("0 * * * *")
	if _, _, err := c.definition("p/j", old); err != nil {
		t.Fatal(err)
	}
	d, s, err := c.definition("p/j", cur)
	if err != nil {
		t.Fatal(err)
	}
	if d.Schedule != "0 * * * *" || s.String() != "0 * * * *" {
		t.Errorf("the current definition's bytes got schedule %q, parsed %q", d.Schedule, s)
	}
	if _, ok := c.named("p/j", store.DefinitionHash(old)); ok {
		t.Error("the cache answered for the job's former definition's hash")
	}
	if d, ok := c.named("p/j", store.DefinitionHash(cur)); !ok || d.Schedule != "0 * * * *" {
		t.Errorf("the current definition's hash: %v, %v", d, ok)
	}
	if _, ok := c.named("p/other", store.DefinitionHash(cur)); ok {
		t.Error("the cache answered for a job that has no definition cached")
	}
}

// A packed state unpacks to the very state it was packed from, so that it
// encodes to the bytes its entry is for, whatever locations its times
// carry.
func TestPackedStateUnpacksToItself(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 24, 12, 0, 1, 123456789, time.UTC)
	paris := time.FixedZone("CET", 3600)
	for _, tc := range []struct {
		name  string
		s     jobState
		whole bool // kept whole, not packed
	}{
		{"zero", jobState{}, false},
		{"UTC, some times zero", jobState{m: statemachine.JobState{State: statemachine.Scheduled, TickNonce: 7, TickAt: at, NextAt: at.Add(-time.Second), WatchdogTimerTs: at}}, false},
		{"the engine's clock's location", jobState{m: statemachine.JobState{State: statemachine.Running, TickAt: at.Local(), Cursor: at.Local(), LastEnded: at.Local()}}, false},
		{"a fixed zone", jobState{m: statemachine.JobState{TickAt: at.In(paris), NextAt: at.In(paris)}}, false},
		{"a zero time in a zone", jobState{m: statemachine.JobState{TickAt: at.In(paris), NextAt: time.Time{}.In(paris)}}, false},
		{"two locations", jobState{m: statemachine.JobState{TickAt: at.In(paris), NextAt: at, Cursor: at.In(paris), LastEnded: at.In(paris)}}, false},
		{"the engine's clock's and a schedule's", jobState{m: statemachine.JobState{TickAt: at.Local(), NextAt: at, Cursor: at, WatchdogTimerTs: at.Local()}}, false},
		{"three locations", jobState{m: statemachine.JobState{TickAt: at.In(paris), NextAt: at, Cursor: at.In(time.FixedZone("X", 7200))}}, true},
		{"everything set", jobState{
			m: statemachine.JobState{
				State: statemachine.Paused, Reason: statemachine.Reason{Kind: statemachine.ReasonPaused, Note: "why"},
				TickNonce: 1, TickAt: at, NextAt: at, Cursor: at, LastEnded: at, WatchdogTimerTs: at, Failures: 2, Triggers: 3,
				Runs: 4, PausedUntil: at,
				Pending:  &statemachine.Occurrence{ID: "o", At: at},
				Active:   []statemachine.Invocation{{Occurrence: statemachine.Occurrence{ID: "i", At: at}, Attempt: 1}},
				Backfill: &statemachine.Backfill{From: at, To: at, Next: at},
			},
			health: Health{TaskFailures: 1, LastError: "e", LastErrorAt: at},
			audit:  []AuditEntry{{At: at, By: "user:a@example.com", Action: "pause"}},
		}, false},
	} {
		if tc.name == "everything set" {
			// A field pack does not know of would be dropped, unseen by
			// DeepEqual unless this case sets it.
			for _, v := range []reflect.Value{reflect.ValueOf(tc.s.m), reflect.ValueOf(tc.s.health)} {
				for i := range v.NumField() {
					if v.Field(i).IsZero() {
						t.Errorf("%s.%s is not set by the test: is it packed?", v.Type().Name(), v.Type().Field(i).Name)
					}
				}
			}
			if n := reflect.TypeFor[jobState]().NumField(); n != 3 {
				t.Errorf("jobState has %d fields; pack knows of 3", n)
			}
		}
		p := pack(tc.s)
		if (p.whole != nil) != tc.whole {
			t.Errorf("%s: kept whole %v, want %v", tc.name, p.whole != nil, tc.whole)
		}
		got := p.unpack()
		if !reflect.DeepEqual(got, tc.s) {
			t.Errorf("%s: unpacked %+v, packed %+v", tc.name, got, tc.s)
		}
		gotTimes := times(reflect.ValueOf(got.m), "m")
		gotTimes["health"] = got.health.LastErrorAt
		wantTimes := times(reflect.ValueOf(tc.s.m), "m")
		wantTimes["health"] = tc.s.health.LastErrorAt
		for path, want := range wantTimes {
			if g := gotTimes[path]; g != want {
				t.Errorf("%s: %s = %#v, was %#v", tc.name, path, g, want)
			}
		}
	}
}
