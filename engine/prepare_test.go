package engine_test

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/task"
)

// dueTick returns the job's tick task due at at.
func (h *harness) dueTick(jobID string, at time.Time) task.Task {
	h.t.Helper()
	tasks, err := h.st.Tasks(h.ctx, 1000)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, tk := range tasks {
		if tk.JobID == jobID && tk.Kind == task.TickLater && tk.ETA.Equal(at) {
			return tk
		}
	}
	h.t.Fatalf("%s has no tick due at %v among %v", jobID, at, tasks)
	return task.Task{}
}

// lateness records what the engine observed of each launch's lateness.
type lateness struct {
	endCounter
	mu   sync.Mutex
	seen []time.Duration
}

func (l *lateness) Launched(_ string, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, d)
}

// A tick prepared ahead commits its occurrence's launch then, as of the
// tick's time, and calls nothing; what it leaves calls the target, once,
// at that time, with the launch already committed.
func TestPrepareTaskCommitsTheLaunchAheadAndCallsAtItsTime(t *testing.T) {
	late := &lateness{endCounter: endCounter{ends: map[string][]statemachine.Status{}}}
	h := newHarness(t, engine.Options{Observer: late})
	h.define("p/a", "* * * * *", statemachine.Policy{}, "rec")
	due := t0.Add(time.Minute)
	tk := h.dueTick("p/a", due)

	h.set(due.Add(-700 * time.Millisecond))
	rest, ok := h.eng.PrepareTask(h.ctx, tk)
	if !ok {
		t.Fatal("a tick of a job awaiting only it was not prepared")
	}
	if n, _ := h.tgt.total(); n != 0 {
		t.Fatalf("preparing called the target %d times; want none before the tick's time", n)
	}
	if st := h.job("p/a").State; st != string(statemachine.Running) {
		t.Errorf("after preparing, the job is %s; want RUNNING", st)
	}
	invs := h.invocations("p/a")
	if len(invs) != 1 || invs[0].Status != string(statemachine.StatusLaunching) || !invs[0].Started.Equal(due) || !invs[0].Occurrence.Equal(due) {
		t.Fatalf("after preparing, the history is %+v; want one invocation of %v LAUNCHING, started at it", invs, due)
	}
	// A second tick, for the next minute, committed with the launch.
	h.dueTick("p/a", due.Add(time.Minute))

	h.set(due)
	if err := rest(h.ctx, tk); err != nil {
		t.Fatal(err)
	}
	if n := h.tgt.count("p/a/"+invs[0].ID, 1); n != 1 {
		t.Errorf("the target was called %d times for the occurrence; want once", n)
	}
	if got := h.invocations("p/a")[0].Status; got != string(statemachine.StatusSucceeded) {
		t.Errorf("the invocation ended %s; want SUCCEEDED", got)
	}
	if len(late.seen) != 1 || late.seen[0] != 0 {
		t.Errorf("observed lateness %v; want one launch, at its time", late.seen)
	}
}

// What cannot be taken ahead is left to its time, with nothing written: a
// task that is not a tick, a tick already due, a tick of a job that waits
// for more than it (paused, an invocation unfinished), and a tick of a
// project with every call it may have in flight.
func TestPrepareTaskLeavesWhatItCannotTakeAhead(t *testing.T) {
	due := t0.Add(time.Minute)
	for _, c := range []struct {
		name string
		opts engine.Options
		// setUp readies job p/a and returns the task to offer, at
		// due - 500ms unless it sets the clock.
		setUp func(h *harness) task.Task
	}{
		{"a start", engine.Options{}, func(h *harness) task.Task {
			tk := h.dueTick("p/a", due)
			tk.Kind, tk.Invocation, tk.Attempt = task.StartInvocation, "x", 1
			return tk
		}},
		{"a tick more than MaxAhead ahead", engine.Options{}, func(h *harness) task.Task {
			tk := h.dueTick("p/a", due)
			h.set(due.Add(-engine.MaxAhead - time.Millisecond))
			return tk
		}},
		{"a tick already due", engine.Options{}, func(h *harness) task.Task {
			tk := h.dueTick("p/a", due)
			h.set(due)
			return tk
		}},
		{"a stale tick", engine.Options{}, func(h *harness) task.Task {
			tk := h.dueTick("p/a", due)
			tk.Nonce++
			return tk
		}},
		{"a paused job's", engine.Options{}, func(h *harness) task.Task {
			tk := h.dueTick("p/a", due)
			if err := h.eng.Pause(h.ctx, "p/a", alice, "maintenance"); err != nil {
				h.t.Fatal(err)
			}
			return tk
		}},
		{"a job with an invocation unfinished", engine.Options{}, func(h *harness) task.Task {
			tk := h.dueTick("p/a", due)
			if _, err := h.eng.Trigger(h.ctx, "p/a", alice); err != nil {
				h.t.Fatal(err)
			}
			return tk
		}},
		{"a project at its call limit", engine.Options{MaxCallsPerProject: 1}, func(h *harness) task.Task {
			h.define("p/b", "* * * * *", statemachine.Policy{}, "rec")
			if _, ok := h.eng.PrepareTask(h.ctx, h.dueTick("p/b", due)); !ok {
				h.t.Fatal("p/b's tick was not prepared")
			}
			return h.dueTick("p/a", due)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, c.opts)
			h.define("p/a", "* * * * *", statemachine.Policy{}, "rec")
			h.set(due.Add(-500 * time.Millisecond))
			tk := c.setUp(h)
			before := h.job("p/a")
			invs := len(h.invocations("p/a"))
			if _, ok := h.eng.PrepareTask(h.ctx, tk); ok {
				t.Fatalf("%s was prepared; want it left to its time", tk)
			}
			after := h.job("p/a")
			if !bytes.Equal(after.EncodedState, before.EncodedState) || len(h.invocations("p/a")) != invs {
				t.Errorf("%s was not prepared, yet the job changed: %s to %s", tk, before.EncodedState, after.EncodedState)
			}
		})
	}
}

// Invariant 1, for a tick prepared ahead: a process that prepared the
// launch and died before the tick's time called nothing, and the tick
// delivered again elsewhere, before, at and after that time, launches the
// occurrence at most once: it is turned away until LaunchGrace after the
// time, then the target is asked. A target that can tell launches it
// then; one that cannot ends it FAILED, launch outcome unknown.
func TestInvariant1_APreparedTickWhoseProcessDied(t *testing.T) {
	due := t0.Add(time.Minute)
	grace := statemachine.DefaultConfig.LaunchGrace
	for _, c := range []struct {
		kind     string
		launches int
		status   statemachine.Status
	}{
		{"rec", 1, statemachine.StatusSucceeded},
		{"blind", 0, statemachine.StatusFailed},
	} {
		t.Run(c.kind, func(t *testing.T) {
			h := newHarness(t, engine.Options{})
			_, eng2, _ := h.open("proc-2", engine.Options{})
			h.define("p/a", "* * * * *", statemachine.Policy{}, c.kind)
			tk := h.dueTick("p/a", due)
			h.set(due.Add(-time.Second))
			if _, ok := h.eng.PrepareTask(h.ctx, tk); !ok {
				t.Fatal("the tick was not prepared")
			}
			// proc-1 dies here: what it prepared never runs.
			for _, at := range []time.Time{due.Add(-500 * time.Millisecond), due, due.Add(grace - time.Millisecond)} {
				h.set(at)
				if err := eng2.HandleTask(h.ctx, tk); !errors.Is(err, statemachine.ErrLaunchInProgress) {
					t.Errorf("the tick delivered again at %v: %v; want it turned away, the launch in progress", at.Sub(due), err)
				}
				if _, ok := eng2.PrepareTask(h.ctx, tk); ok {
					t.Errorf("the tick prepared again at %v", at.Sub(due))
				}
			}
			h.set(due.Add(grace))
			if err := eng2.HandleTask(h.ctx, tk); err != nil {
				t.Fatal(err)
			}
			invs := h.invocations("p/a")
			if n, most := h.tgt.total(); n != c.launches || most > 1 {
				t.Errorf("%d launches (at most %d of one attempt); want %d", n, most, c.launches)
			}
			if len(invs) != 1 || invs[0].Status != string(c.status) {
				t.Errorf("history %+v; want the occurrence %s", invs, c.status)
			}
		})
	}
}

// Invariant 1 again: what a prepared tick leaves, run at the tick's time
// while the tick is delivered again to two processes, launches once.
func TestInvariant1_APreparedTickDeliveredAgainAtItsTime(t *testing.T) {
	due := t0.Add(time.Minute)
	h := newHarness(t, engine.Options{})
	_, eng2, _ := h.open("proc-2", engine.Options{})
	const jobs = 10
	var ticks []task.Task
	for i := range jobs {
		id := fmt.Sprintf("p/job-%d", i)
		h.define(id, "* * * * *", statemachine.Policy{}, "rec")
		ticks = append(ticks, h.dueTick(id, due))
	}
	h.set(due.Add(-time.Second))
	var rests []task.Handler
	for _, tk := range ticks {
		rest, ok := h.eng.PrepareTask(h.ctx, tk)
		if !ok {
			t.Fatalf("%s was not prepared", tk)
		}
		rests = append(rests, rest)
	}
	h.set(due)
	var wg sync.WaitGroup
	for i, tk := range ticks {
		wg.Go(func() { _ = rests[i](h.ctx, tk) })
		for _, eng := range []*engine.Engine{h.eng, eng2} {
			wg.Go(func() { _ = eng.HandleTask(h.ctx, tk) })
		}
	}
	wg.Wait()
	if n, most := h.tgt.total(); n != jobs || most != 1 {
		t.Errorf("%d launches, at most %d of one attempt; want %d, one each", n, most, jobs)
	}
}

// An abort of an attempt whose launch was prepared, before the tick's
// time, calls the launch off: the invocation ends ABORTED and its target
// is never called. A pause lets it launch: it applies from the next
// occurrence, as it would while the target was being called.
func TestPreparedLaunchAndRequestsBeforeItsTime(t *testing.T) {
	due := t0.Add(time.Minute)
	for _, c := range []struct {
		name     string
		request  func(h *harness, invocation string) error
		launches int
		status   statemachine.Status
	}{
		{"abort", func(h *harness, invocation string) error { return h.eng.Abort(h.ctx, "p/a", invocation, alice) }, 0, statemachine.StatusAborted},
		{"pause", func(h *harness, _ string) error { return h.eng.Pause(h.ctx, "p/a", alice, "maintenance") }, 1, statemachine.StatusSucceeded},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, engine.Options{})
			h.define("p/a", "* * * * *", statemachine.Policy{}, "rec")
			tk := h.dueTick("p/a", due)
			h.set(due.Add(-time.Second))
			rest, ok := h.eng.PrepareTask(h.ctx, tk)
			if !ok {
				t.Fatal("the tick was not prepared")
			}
			inv := h.invocations("p/a")[0].ID
			h.set(due.Add(-500 * time.Millisecond))
			if err := c.request(h, inv); err != nil {
				t.Fatal(err)
			}
			h.set(due)
			if err := rest(h.ctx, tk); err != nil {
				t.Fatal(err)
			}
			if n, _ := h.tgt.total(); n != c.launches {
				t.Errorf("%d launches; want %d", n, c.launches)
			}
			if got := h.invocations("p/a")[0]; got.Status != string(c.status) {
				t.Errorf("the occurrence ended %s (%s); want %s", got.Status, got.Message, c.status)
			}
		})
	}
}

// A tick prepared ahead whose transaction runs only after the tick's
// time (a store far behind) is an ordinary tick: its record says when it
// ran, so the history shows the lateness.
func TestPrepareTaskRecordsWhenATransactionLateForItsTimeRan(t *testing.T) {
	h := newHarness(t, engine.Options{})
	h.define("p/a", "* * * * *", statemachine.Policy{}, "rec")
	due := t0.Add(time.Minute)
	tk := h.dueTick("p/a", due)
	ran := due.Add(2 * time.Second)
	// The first reading lets the tick be prepared; the transaction's
	// comes after its time.
	var mu sync.Mutex
	readings := 0
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		if readings++; readings == 1 {
			return due.Add(-500 * time.Millisecond)
		}
		return ran
	}
	eng := engine.New(h.st, h.disp, map[string]targets.Target{"rec": h.tgt}, engine.Options{Now: clock})
	if _, ok := eng.PrepareTask(h.ctx, tk); !ok {
		t.Fatal("the tick was not prepared")
	}
	if inv := h.invocations("p/a")[0]; !inv.Started.Equal(ran) {
		t.Errorf("the invocation started at %v; want %v, when its transaction ran", inv.Started, ran)
	}
}
