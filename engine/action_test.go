package engine

import (
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// unknownAction is an action the engine was not written for, as a new one
// added to the machine would be until the engine learns it.
type unknownAction struct{ statemachine.Action }

// An action the engine drops silently would be a write or a call that
// never happens; both switches over actions must refuse it loudly.
func TestTheEngineRefusesAnActionItDoesNotKnow(t *testing.T) {
	wantPanic := func(t *testing.T, what string, fn func()) {
		t.Helper()
		defer func() {
			r := recover()
			if r == nil || !strings.Contains(r.(string), "unknown action") {
				t.Errorf("%s of an unknown action: recovered %v, want a panic naming it", what, r)
			}
		}()
		fn()
	}
	wantPanic(t, "writing", func() {
		jt := &jobTx{job: &store.JobRecord{ID: "p/j"}}
		_ = jt.write(unknownAction{})
	})
	wantPanic(t, "carrying out", func() {
		e := &Engine{}
		_ = e.carryOut(t.Context(), "p/j", committed{acts: []statemachine.Action{unknownAction{}}})
	})
}
