package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/engine/enginetest"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/store/sqlite/sqlitetest"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/task"
)

// Invariant 1: duplicate and concurrent deliveries of every task, to two
// processes sharing one database file, never launch an occurrence twice.
func TestInvariant1_AtMostOneLaunchPerOccurrence(t *testing.T) {
	h := newHarness(t, engine.Options{})
	_, eng2, _ := h.open("proc-2", engine.Options{})
	const jobs = 20
	for i := range jobs {
		h.define(fmt.Sprintf("p/job-%d", i), "* * * * *", statemachine.Policy{}, "rec")
	}
	engines := []*engine.Engine{h.eng, eng2}
	for minute := 1; minute <= 5; minute++ {
		h.set(t0.Add(time.Duration(minute)*time.Minute + time.Second))
		// Deliver every due task three times, to both processes at once,
		// until no task is left: ticks first, then the starts they made.
		for round := 0; round < 4; round++ {
			tasks, err := h.st.Tasks(h.ctx, 1000)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for _, tk := range tasks {
				if tk.ETA.After(h.clock()) {
					continue
				}
				for copy := range 3 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						_ = engines[copy%2].HandleTask(h.ctx, tk)
					}()
				}
			}
			wg.Wait()
			for _, tk := range tasks {
				if !tk.ETA.After(h.clock()) {
					if err := sqlitetest.DeleteTask(h.ctx, h.path, tk.Name()); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	launches, most := h.tgt.total()
	if most != 1 {
		t.Errorf("an attempt was launched %d times; want at most once", most)
	}
	if want := jobs * 5; launches != want {
		t.Errorf("%d launches; want %d (one per job per minute)", launches, want)
	}
}

// Invariant 2: the target is called only once LAUNCHING is committed, and a
// store that cannot commit stops launches.
func TestInvariant2_WriteBeforeCall(t *testing.T) {
	t.Run("LAUNCHING is committed when the target is called", func(t *testing.T) {
		h := newHarness(t, engine.Options{})
		var checked int
		h.tgt.check = func(req targets.Request) {
			inv, err := h.st.Invocation(h.ctx, req.JobID, req.Invocation)
			if err != nil {
				t.Errorf("at the call, the invocation is not in the store: %v", err)
				return
			}
			if inv.Status != string(statemachine.StatusLaunching) || inv.Attempt != req.Attempt {
				t.Errorf("at the call, the store says %s attempt %d; want LAUNCHING attempt %d", inv.Status, inv.Attempt, req.Attempt)
			}
			checked++
		}
		h.define("p/a", "* * * * *", statemachine.Policy{MaxAttempts: 2}, "rec")
		h.runUntil(t0.Add(3*time.Minute + 30*time.Second))
		if checked != 3 {
			t.Errorf("%d launches checked; want 3", checked)
		}
	})
	t.Run("a store that fails every commit launches nothing", func(t *testing.T) {
		h := newHarness(t, engine.Options{})
		h.define("p/a", "* * * * *", statemachine.Policy{}, "rec")
		broken := engine.New(failingStore{h.st}, &enginetest.LateQueue{Queue: h.disp}, map[string]targets.Target{"rec": h.tgt}, engine.Options{Now: h.clock})
		h.set(t0.Add(time.Minute))
		for range 3 {
			tasks, err := h.st.Tasks(h.ctx, 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, tk := range tasks {
				if err := broken.HandleTask(h.ctx, tk); err == nil {
					t.Errorf("HandleTask(%s) succeeded on a store that cannot commit", tk)
				}
			}
		}
		if n, _ := h.tgt.total(); n != 0 {
			t.Errorf("%d launches through a store that cannot commit; want 0", n)
		}
	})
}

// failingStore refuses every transaction, as a read-only or broken disk.
type failingStore struct{ store.Store }

func (failingStore) Update(context.Context, string, func(store.Tx) error) ([]task.Task, error) {
	return nil, errors.New("disk is read-only")
}

// Invariant 3: a process that dies after calling the target and before
// recording the outcome leaves an ambiguous launch. The engine asks the
// target; a target that cannot tell makes it FAILED: launch outcome
// unknown, never a second launch, unless the job is idempotent: then the
// ambiguous launch is a failed attempt and the next one goes out with the
// same key, so max_attempts bounds even a launch that kills the server
// every time.
func TestInvariant3_FailClosedOnAmbiguity(t *testing.T) {
	for _, tc := range []struct {
		name       string
		kind       string
		idempotent bool
		dies       int   // how many launches the process dies after
		launches   []int // of attempts 1, 2, 3
		status     statemachine.Status
		message    string
	}{
		{"a target that can tell gives the real outcome", "rec", false, 1, []int{1, 0, 0}, statemachine.StatusSucceeded, "ok"},
		{"a target that cannot tell fails closed", "blind", false, 1, []int{1, 0, 0}, statemachine.StatusFailed, "launch outcome unknown"},
		{"an idempotent target is launched again as the next attempt", "blind", true, 1, []int{1, 1, 0}, statemachine.StatusSucceeded, "ok"},
		{"an idempotent target whose every launch kills the server is launched max_attempts times", "blind", true, 100, []int{1, 1, 1}, statemachine.StatusFailed, "launch outcome unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			died := 0
			h := newHarness(t, engine.Options{})
			h.tgt.crash = func(targets.Request) bool {
				mu.Lock()
				defer mu.Unlock()
				died++
				return died <= tc.dies
			}
			h.define("p/a", "0 * * * *", statemachine.Policy{Idempotent: tc.idempotent, MaxAttempts: 3}, tc.kind)
			h.runUntil(t0.Add(time.Hour + 10*time.Minute))
			key := "p/a/" + statemachine.OccurrenceID(t0.Add(time.Hour))
			for i, want := range tc.launches {
				if n := h.tgt.count(key, i+1); n != want {
					t.Errorf("attempt %d launched %d times; want %d", i+1, n, want)
				}
			}
			inv, err := h.st.Invocation(h.ctx, "p/a", statemachine.OccurrenceID(t0.Add(time.Hour)))
			if err != nil {
				t.Fatal(err)
			}
			if inv.Status != string(tc.status) || inv.Message != tc.message {
				t.Errorf("invocation ended %s %q; want %s %q", inv.Status, inv.Message, tc.status, tc.message)
			}
		})
	}
}

// Invariant 4: purge the whole queue; every job is repaired by the
// watchdog within one period plus grace and fires again.
func TestInvariant4_NoJobIsStuck(t *testing.T) {
	h := newHarness(t, engine.Options{})
	const jobs = 30
	for i := range jobs {
		h.define(fmt.Sprintf("p/job-%d", i), "*/2 * * * *", statemachine.Policy{}, "rec")
	}
	h.runUntil(t0.Add(3 * time.Minute))
	if err := sqlitetest.PurgeTasks(h.ctx, h.path); err != nil {
		t.Fatal(err)
	}
	// The next occurrence is 10:04; its tick is gone. The watchdog must see
	// it by 10:04 + grace (30s) + one period (1m).
	h.runUntil(t0.Add(5*time.Minute + 30*time.Second))
	overdue, err := h.st.Overdue(h.ctx, h.clock().Add(-90*time.Second), 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(overdue) != 0 {
		t.Errorf("jobs still overdue past period plus grace: %v", overdue)
	}
	h.runUntil(t0.Add(7 * time.Minute))
	for i := range jobs {
		id := fmt.Sprintf("p/job-%d", i)
		key := id + "/" + statemachine.OccurrenceID(t0.Add(6*time.Minute))
		if h.tgt.count(key, 1) != 1 {
			t.Errorf("%s did not fire at 10:06 after the purge", id)
		}
	}
}

// Invariant 5: an outage leaves every missed occurrence recorded with its
// reason; the counts add up to what the schedule says was due.
func TestInvariant5_NothingLostSilently(t *testing.T) {
	h := newHarness(t, engine.Options{})
	h.define("p/a", "* * * * *", statemachine.Policy{}, "rec")
	h.define("p/b", "* * * * *", statemachine.Policy{CatchupWindow: 10 * time.Minute}, "rec")
	h.runUntil(t0.Add(2*time.Minute + 30*time.Second))
	h.set(t0.Add(62*time.Minute + 30*time.Second)) // an hour down
	h.runUntil(t0.Add(63*time.Minute + 30*time.Second))
	for _, id := range []string{"p/a", "p/b"} {
		var ran, skipped int
		reasons := map[string]int{}
		for _, inv := range h.invocations(id) {
			if inv.Status == string(statemachine.StatusSkipped) {
				skipped += inv.Count
				reasons[inv.Message]++
				continue
			}
			ran++
		}
		if ran+skipped != 63 {
			t.Errorf("%s: %d ran + %d skipped = %d; want the 63 occurrences from 10:01 to 11:03 (%v)", id, ran, skipped, ran+skipped, reasons)
		}
		if skipped == 0 {
			t.Errorf("%s: nothing recorded as skipped after an hour down", id)
		}
		for msg := range reasons {
			if !strings.Contains(msg, "skipped: ") {
				t.Errorf("%s: a skip record without its reason: %q", id, msg)
			}
		}
	}
}

// Invariant 6: a stale task — an old tick nonce, a start of an attempt that
// already ran — is acknowledged and changes nothing.
func TestInvariant6_StaleIsHarmless(t *testing.T) {
	h := newHarness(t, engine.Options{})
	h.define("p/a", "* * * * *", statemachine.Policy{}, "rec")
	first, err := h.st.Tasks(h.ctx, 10)
	if err != nil || len(first) != 1 {
		t.Fatalf("want the one first tick, got %v, %v", first, err)
	}
	h.runUntil(t0.Add(2*time.Minute + 30*time.Second))
	before := h.job("p/a")
	invsBefore := len(h.invocations("p/a"))
	launches, _ := h.tgt.total()
	stale := []task.Task{
		first[0],
		{Kind: task.StartInvocation, JobID: "p/a", Nonce: 12345, Invocation: statemachine.OccurrenceID(t0.Add(time.Minute)), Attempt: 1},
		{Kind: task.StartInvocation, JobID: "p/a", Nonce: 1, Invocation: "no-such-invocation", Attempt: 1},
		{Kind: "bogus", JobID: "p/a"},
		{Kind: task.TickLater, JobID: "p/no-such-job", Nonce: 1},
	}
	for _, tk := range stale {
		if err := h.eng.HandleTask(h.ctx, tk); err != nil {
			t.Errorf("HandleTask(%s) = %v; a stale task is acknowledged", tk, err)
		}
	}
	after := h.job("p/a")
	if string(after.EncodedState) != string(before.EncodedState) || after.State != before.State || !after.WatchdogTimerTs.Equal(before.WatchdogTimerTs) {
		t.Errorf("stale tasks changed the job:\nbefore %s\nafter  %s", before.EncodedState, after.EncodedState)
	}
	if n := len(h.invocations("p/a")); n != invsBefore {
		t.Errorf("stale tasks changed the invocations: %d -> %d", invsBefore, n)
	}
	if n, _ := h.tgt.total(); n != launches {
		t.Errorf("stale tasks launched: %d -> %d", launches, n)
	}
}

// Invariant 7: one project's hanging targets do not take the workers that
// another project's jobs need.
func TestInvariant7_OneProjectCannotHurtAnother(t *testing.T) {
	h := newHarness(t, engine.Options{MaxCallsPerProject: 2})
	release := make(chan struct{})
	fast := make(chan string, 100)
	h.tgt.check = func(req targets.Request) {
		if engine.ProjectOf(req.JobID) == "slow" {
			<-release
			return
		}
		fast <- req.JobID
	}
	for i := range 8 {
		h.define(fmt.Sprintf("slow/job-%d", i), "* * * * *", statemachine.Policy{}, "rec")
	}
	for i := range 4 {
		h.define(fmt.Sprintf("fast/job-%d", i), "* * * * *", statemachine.Policy{}, "rec")
	}
	h.set(t0.Add(time.Minute))
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = h.disp.Run(ctx) }()
	defer func() { cancel(); close(release); <-done }()
	seen := map[string]bool{}
	timeout := time.After(30 * time.Second)
	for len(seen) < 4 {
		select {
		case id := <-fast:
			seen[id] = true
		case <-timeout:
			t.Fatalf("only %d of 4 fast jobs launched while the slow project hangs: %v", len(seen), seen)
		}
	}
}

// TestACallsOutcomeOutlastsAStoreThatFailsForAWhile: the store fails the
// first two writes after a target call (a database restarting, its
// connections cut); the process still knows what the call returned, and
// records it when the store is back: the attempt ends SUCCEEDED, launched
// once, rather than staying in doubt until it times out.
func TestACallsOutcomeOutlastsAStoreThatFailsForAWhile(t *testing.T) {
	h := newHarness(t, engine.Options{})
	h.define("p/a", "* * * * *", statemachine.Policy{}, "rec")
	var fails atomic.Int32
	flaky := &failingAfterCall{Store: h.st, fails: &fails}
	h.tgt.check = func(targets.Request) { fails.Store(2) }
	eng := engine.New(flaky, &enginetest.LateQueue{Queue: h.disp}, map[string]targets.Target{"rec": h.tgt}, engine.Options{Now: h.clock})
	h.set(t0.Add(time.Minute))
	for range 3 {
		tasks, err := h.st.Tasks(h.ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range tasks {
			if !tk.ETA.After(h.clock()) {
				if err := eng.HandleTask(h.ctx, tk); err != nil {
					t.Fatalf("HandleTask(%s): %v", tk, err)
				}
				if err := sqlitetest.DeleteTask(h.ctx, h.path, tk.Name()); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if n, most := h.tgt.total(); n != 1 || most != 1 {
		t.Errorf("%d launches, at most %d of one attempt; want one", n, most)
	}
	if left := fails.Load(); left != 0 {
		t.Errorf("%d of the store's failures were never met", left)
	}
	invs := h.invocations("p/a")
	if len(invs) != 1 || invs[0].Status != "SUCCEEDED" {
		t.Errorf("invocations %v; want one SUCCEEDED", invs)
	}
}

// failingAfterCall fails the Updates while fails is positive, counting it
// down.
type failingAfterCall struct {
	store.Store
	fails *atomic.Int32
}

func (f *failingAfterCall) Update(ctx context.Context, jobID string, fn func(store.Tx) error) ([]task.Task, error) {
	if f.fails.Add(-1) >= 0 {
		return nil, errors.New("the connection was terminated")
	}
	f.fails.Store(0)
	return f.Store.Update(ctx, jobID, fn)
}
