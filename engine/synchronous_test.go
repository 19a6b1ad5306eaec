package engine_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/targets"
)

// A synchronous target's call is the attempt's run: its record reads
// RUNNING from the commit that allows the call until the call's end is
// recorded, where it read LAUNCHING for the whole run (a 30-second
// command looked like a stuck launch). The job's state, committed before
// the call (invariant 2), keeps the attempt LAUNCHING: that is what
// recovery goes by.
func TestASynchronousTargetsRunningInvocationReadsRUNNING(t *testing.T) {
	h := newHarness(t, engine.Options{})
	called, release := make(chan struct{}), make(chan struct{})
	h.tgt.check = func(targets.Request) {
		close(called)
		<-release
	}
	h.define("p/a", "* * * * *", statemachine.Policy{}, "sync")
	due := t0.Add(time.Minute)
	tick := h.dueTick("p/a", due)
	h.set(due)

	done := make(chan struct{})
	var handled error
	go func() {
		defer close(done)
		handled = h.eng.HandleTask(h.ctx, tick)
	}()
	var releaseOnce sync.Once
	defer func() {
		releaseOnce.Do(func() { close(release) })
		<-done
	}()
	select {
	case <-called:
	case <-done:
		t.Fatalf("the tick was handled (%v) without calling the target", handled)
	}

	id := statemachine.OccurrenceID(due)
	inv, err := h.st.Invocation(h.ctx, "p/a", id)
	if err != nil {
		t.Fatal(err)
	}
	if inv.Status != string(statemachine.StatusRunning) || !inv.Started.Equal(due) {
		t.Errorf("while the target runs the attempt, its record reads %s, started %v; want RUNNING, started %v", inv.Status, inv.Started, due)
	}
	v, err := h.eng.View(h.ctx, "p/a")
	if err != nil {
		t.Fatal(err)
	}
	if len(v.State.Active) != 1 || v.State.Active[0].Status != statemachine.StatusLaunching {
		t.Fatalf("while the target runs the attempt, the job's state holds %+v; want it LAUNCHING, as recovery must see it", v.State.Active)
	}
	if p := h.eng.Phase(v, v.State.Active[0]); p != statemachine.StatusRunning {
		t.Errorf("while the target runs the attempt, its phase reads %s; want RUNNING, as its record", p)
	}

	releaseOnce.Do(func() { close(release) })
	<-done
	if handled != nil {
		t.Fatal(handled)
	}
	if inv, err = h.st.Invocation(h.ctx, "p/a", id); err != nil {
		t.Fatal(err)
	}
	if inv.Status != string(statemachine.StatusSucceeded) || inv.Message != "ok" {
		t.Errorf("after the call, the record reads %s %q; want SUCCEEDED \"ok\"", inv.Status, inv.Message)
	}
	log := string(inv.Log)
	launching, succeeded := strings.Index(log, "attempt 1 LAUNCHING\n"), strings.Index(log, "attempt 1 SUCCEEDED: ok\n")
	if launching < 0 || succeeded < launching {
		t.Errorf("the log does not say when the launch committed, then the end:\n%s", log)
	}
}

// A process that dies in a synchronous target's launch leaves a record
// that reads RUNNING, yet a launch in doubt all the same (invariant 3):
// recovery goes by the job's state, which says LAUNCHING, and ends it
// exactly as the same launch of a target that does not run within the
// call, whose record reads LAUNCHING, is ended.
func TestASynchronousLaunchInDoubtIsRecoveredAsAnyOther(t *testing.T) {
	for _, tc := range []struct {
		name       string
		before     bool // the process dies before the call, not in it
		idempotent bool
		launches   []int // of attempts 1 and 2
		status     statemachine.Status
		message    string
	}{
		{"dead in the call, the launch fails closed", false, false, []int{1, 0}, statemachine.StatusFailed, "launch outcome unknown"},
		{"dead before the call, the launch fails closed", true, false, []int{0, 0}, statemachine.StatusFailed, "launch outcome unknown"},
		{"dead in the call of an idempotent job, the next attempt goes out", false, true, []int{1, 1}, statemachine.StatusSucceeded, "ok"},
	} {
		for _, kind := range []string{"blind", "sync"} {
			t.Run(tc.name+"/"+kind, func(t *testing.T) {
				var mu sync.Mutex
				died := false
				dies := func(targets.Request) bool {
					mu.Lock()
					defer mu.Unlock()
					first := !died
					died = true
					return first
				}
				h := newHarness(t, engine.Options{})
				if tc.before {
					h.tgt.crashBefore = dies
				} else {
					h.tgt.crash = dies
				}
				h.define("p/a", "0 * * * *", statemachine.Policy{Idempotent: tc.idempotent, MaxAttempts: 2}, kind)
				due := t0.Add(time.Hour)
				id := statemachine.OccurrenceID(due)
				h.runUntil(due)

				reads := statemachine.StatusLaunching
				if kind == "sync" {
					reads = statemachine.StatusRunning
				}
				inv, err := h.st.Invocation(h.ctx, "p/a", id)
				if err != nil {
					t.Fatal(err)
				}
				if inv.Status != string(reads) {
					t.Errorf("after the process died, the record reads %s; want %s", inv.Status, reads)
				}
				v, err := h.eng.View(h.ctx, "p/a")
				if err != nil {
					t.Fatal(err)
				}
				if len(v.State.Active) != 1 || v.State.Active[0].Status != statemachine.StatusLaunching {
					t.Fatalf("after the process died, the job's state holds %+v; want the launch LAUNCHING, in doubt", v.State.Active)
				}

				h.runUntil(due.Add(10 * time.Minute))
				for i, want := range tc.launches {
					if n := h.tgt.count("p/a/"+id, i+1); n != want {
						t.Errorf("attempt %d launched %d times; want %d", i+1, n, want)
					}
				}
				if inv, err = h.st.Invocation(h.ctx, "p/a", id); err != nil {
					t.Fatal(err)
				}
				if inv.Status != string(tc.status) || inv.Message != tc.message {
					t.Errorf("the invocation ended %s %q; want %s %q", inv.Status, inv.Message, tc.status, tc.message)
				}
			})
		}
	}
}
