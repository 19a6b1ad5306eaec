package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/engine/enginetest"
	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/task/local"
)

// What the wall clock stepping under a running Sundial does (issue 36,
// finding 17; docs/defenses.md, "The wall clock steps"): an NTP step or a
// VM resumed from a snapshot moves the clock every process on the host
// reads, back or forward, while they run.

// embeddedConfig is the engine's configuration in the embedded shape
// (server.embeddedConfig): a StartInvocation that comes again is taken
// for one whose process died, and asked about after a second.
func embeddedConfig() statemachine.Config {
	c := statemachine.DefaultConfig
	c.LaunchGrace = time.Second
	return c
}

// runningProcess is one server process of the embedded shape over a
// database file: its engine and a dispatcher running (Run) with the lock
// directory the server gives it, on the shared clock. idle receives the
// times Run tells Options.Idle it sleeps until.
type runningProcess struct {
	eng  *engine.Engine
	idle chan time.Time
}

// runProcess starts a process as owner on the database at path, with
// that many workers; it stops when ctx ends, and the returned channel is
// closed once Run returned.
func runProcess(ctx context.Context, t *testing.T, path string, clk *fakeclock.Clock, owner string, workers int, tgt *recorder, ends *endCounter) (*runningProcess, <-chan struct{}) {
	t.Helper()
	st, err := sqlite.Open(path, sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	q := &enginetest.LateQueue{}
	p := &runningProcess{idle: make(chan time.Time, 1000)}
	p.eng = engine.New(st, q, map[string]targets.Target{"rec": tgt, "blind": blind{tgt}}, engine.Options{Now: clk.Now, Config: embeddedConfig(), Observer: ends})
	// Run waits on real timers for the fake clock's durations: short ones,
	// so that it looks again soon after the test moves the clock.
	disp := local.New(st, p.eng.HandleTask, local.Options{
		Owner: owner, Workers: workers, LockDir: path + ".owners", Now: clk.Now, Logger: slog.New(slog.DiscardHandler),
		Heartbeat: 10 * time.Millisecond, Poll: 10 * time.Millisecond, OrphanAfter: 10 * time.Second,
		Idle: func(until time.Time) {
			select {
			case p.idle <- until:
			default:
			}
		},
	})
	q.Queue = disp
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := disp.Run(ctx); err != nil {
			t.Errorf("%s: Run: %v", owner, err)
		}
	}()
	return p, stopped
}

// idleSince waits for p to go to sleep with nothing in hand after a look
// at the table at from or later.
func idleSince(t *testing.T, p *runningProcess, from time.Time) {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case until := <-p.idle:
			if !until.Before(from) {
				return
			}
		case <-timeout:
			t.Fatalf("the process did not look at the table after %v", from)
		}
	}
}

// The wall clock steps an hour forward while process A is in the call of
// a launch. Process B, on the same file, must not take A's task for one
// whose process died: A's lease and heartbeat in the rows are an hour old
// by the clock, yet A lives and works. Before, B ran the task again and,
// the launch being older than the LaunchGrace by the clock, asked the
// target: one that can tell heard "never received" (A had not reached it
// yet) and was launched twice; one that cannot ended FAILED "launch
// outcome unknown" while A's launch went on.
func TestAForwardStepDoesNotDeliverALaunchUnderWayAgain(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"rec", "blind"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			clk := fakeclock.New(t0)
			path := filepath.Join(t.TempDir(), "sundial.db")
			tgt := newRecorder()
			ends := &endCounter{ends: map[string][]statemachine.Status{}}
			// A's launch stops in the target's call until released; any
			// other goes through.
			entered, release := make(chan struct{}), make(chan struct{})
			var calls atomic.Int32
			tgt.check = func(targets.Request) {
				if calls.Add(1) == 1 {
					close(entered)
					<-release
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// A's one worker is in the call: A claims nothing more, and
			// B is the first to claim after the step.
			a, stoppedA := runProcess(ctx, t, path, clk, "A", 1, tgt, ends)
			const id = "p/j"
			if err := a.eng.Define(ctx, id, engine.Definition{Schedule: "* * * * *", Target: kind, Policy: statemachine.Policy{Timeout: 2 * time.Hour}}); err != nil {
				t.Fatal(err)
			}
			clk.Set(t0.Add(time.Minute))
			select {
			case <-entered:
			case <-time.After(time.Minute):
				t.Fatal("A never launched the occurrence")
			}
			b, stoppedB := runProcess(ctx, t, path, clk, "B", 4, tgt, ends)
			idleSince(t, b, t0.Add(time.Minute))

			stepped := t0.Add(time.Minute + time.Hour)
			clk.Set(stepped)
			idleSince(t, b, stepped)
			close(release)
			idleSince(t, a, stepped)
			cancel()
			<-stoppedA
			<-stoppedB

			key := id + "/" + statemachine.OccurrenceID(t0.Add(time.Minute))
			if n := tgt.count(key, 1); n != 1 {
				t.Errorf("the occurrence's attempt was launched %d times; want once", n)
			}
			if got := ends.of(id); len(got) != 1 || got[0] != statemachine.StatusSucceeded {
				t.Errorf("the invocation ended %v; want SUCCEEDED once, as A's launch did", got)
			}
		})
	}
}

// stepSizes are the steps finding 17 names: seconds, minutes, an hour.
var stepSizes = []time.Duration{10 * time.Second, 10 * time.Minute, time.Hour}

// stepJob is a job of the step tests.
type stepJob struct {
	id, expr string
	policy   statemachine.Policy
}

// occurrences returns what the store holds of each of the job's
// occurrences up to until: "ran" for one with an invocation that
// launched, its skip reason for one recorded as skipped. An occurrence
// recorded twice fails the test.
func (h *harness) occurrences(j stepJob, until time.Time) map[time.Time]string {
	h.t.Helper()
	def := engine.Definition{Schedule: j.expr}
	sched, err := def.Parse(j.id)
	if err != nil {
		h.t.Fatal(err)
	}
	got := map[time.Time]string{}
	note := func(at time.Time, what string) {
		if at.After(until) {
			return
		}
		if was, ok := got[at]; ok {
			h.t.Errorf("%s: occurrence %v recorded twice: %s and %s", j.id, at, was, what)
		}
		got[at] = what
	}
	for _, inv := range h.invocations(j.id) {
		switch {
		case inv.Status == string(statemachine.StatusSkipped) && inv.Count > 1:
			for at := range sched.Between(inv.Occurrence, inv.Last.Add(time.Nanosecond)) {
				note(at, inv.Reason)
			}
		case inv.Status == string(statemachine.StatusSkipped):
			note(inv.Occurrence, inv.Reason)
		default:
			note(inv.Occurrence, "ran")
		}
	}
	return got
}

// notStuck fails the test if a job's watchdog timer passed longer than a
// watchdog period plus grace ago by the clock as it reads now.
func (h *harness) notStuck(when string) {
	h.t.Helper()
	const periodAndGrace = time.Minute + 30*time.Second
	ids, err := h.st.Overdue(h.ctx, h.clock().Add(-periodAndGrace), 100)
	if err != nil {
		h.t.Fatal(err)
	}
	if len(ids) > 0 {
		h.t.Errorf("%s: %v overdue by more than a watchdog period plus grace", when, ids)
	}
}

// After a step back, nothing runs again: an occurrence that ran is behind
// the job's cursor, which a step back does not move. The jobs go on at
// the wall clock's times, each occurrence once, and so up to the step late
// in real time; none is stuck by the clock as it reads after the step.
func TestAStepBackLaunchesNoOccurrenceTwice(t *testing.T) {
	t.Parallel()
	jobs := []stepJob{
		{id: "p/minutely", expr: "* * * * *"},
		{id: "p/quarterly", expr: "*/15 * * * *"},
		{id: "p/interval", expr: "@every 10m"},
	}
	for _, step := range stepSizes {
		t.Run(step.String(), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, engine.Options{Config: embeddedConfig()})
			for _, j := range jobs {
				h.define(j.id, j.expr, j.policy, "rec")
			}
			before := t0.Add(30*time.Minute + 30*time.Second)
			h.runUntil(before)
			h.set(before.Add(-step))
			// Minute by minute, past where the clock was before the step.
			for at := h.clock().Add(time.Minute); !at.After(before.Add(20 * time.Minute)); at = at.Add(time.Minute) {
				h.runUntil(at)
				h.notStuck(fmt.Sprintf("%v after the step", at.Sub(before.Add(-step))))
			}
			if _, most := h.tgt.total(); most != 1 {
				t.Errorf("an attempt was launched %d times; want each once", most)
			}
			end := h.clock()
			for _, j := range jobs[1:] {
				h.occurrences(j, end)
			}
			got := h.occurrences(jobs[0], end)
			for at := t0.Add(time.Minute); !at.After(end); at = at.Add(time.Minute) {
				if got[at] != "ran" {
					t.Errorf("%s: occurrence %v: %q; want it run, once", jobs[0].id, at, got[at])
				}
			}
			for _, inv := range h.invocations(jobs[0].id) {
				if late := inv.Started.Sub(inv.Occurrence); late < 0 || late >= time.Minute {
					t.Errorf("%s: occurrence %v launched at %v; want it at its time by the wall clock", jobs[0].id, inv.Occurrence, inv.Started)
				}
			}
		})
	}
}

// After a step forward, the occurrences the step passed over are due at
// once, and the job's catch-up policy decides them as it does those a
// stopped server missed: the latest runs if it is within the catch-up
// window (at least the engine's late tolerance), the others are recorded
// as skipped, superseded within the window and missed beyond it. Every
// fire time is run or recorded, once; nothing runs twice, nothing is
// stuck.
func TestAStepForwardFollowsTheCatchUpPolicy(t *testing.T) {
	t.Parallel()
	late := statemachine.DefaultConfig.LateTolerance
	jobs := []stepJob{
		{id: "p/minutely", expr: "* * * * *"},
		{id: "p/window", expr: "* * * * *", policy: statemachine.Policy{CatchupWindow: 30 * time.Minute}},
		{id: "p/quarterly", expr: "*/15 * * * *"},
	}
	for _, step := range stepSizes {
		t.Run(step.String(), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, engine.Options{Config: embeddedConfig()})
			for _, j := range jobs {
				h.define(j.id, j.expr, j.policy, "rec")
			}
			before := t0.Add(10*time.Minute + 30*time.Second)
			h.runUntil(before)
			stepped := before.Add(step)
			h.set(stepped)
			for at := stepped; !at.After(stepped.Add(10 * time.Minute)); at = at.Add(time.Minute) {
				h.runUntil(at)
				h.notStuck(fmt.Sprintf("%v after the step", at.Sub(stepped)))
			}
			if _, most := h.tgt.total(); most != 1 {
				t.Errorf("an attempt was launched %d times; want each once", most)
			}
			end := h.clock()
			for _, j := range jobs {
				sched, err := (&engine.Definition{Schedule: j.expr}).Parse(j.id)
				if err != nil {
					t.Fatal(err)
				}
				window := max(j.policy.CatchupWindow, late)
				var gap []time.Time
				for at := range sched.Between(before, stepped.Add(time.Nanosecond)) {
					gap = append(gap, at)
				}
				got := h.occurrences(j, end)
				for at := range sched.Between(t0.Add(time.Nanosecond), end.Add(time.Nanosecond)) {
					want := "ran"
					switch i := slices.Index(gap, at); {
					case i < 0:
					case stepped.Sub(at) > window:
						want = string(statemachine.SkipMissed)
					case i < len(gap)-1:
						want = string(statemachine.SkipSuperseded)
					}
					if got[at] != want {
						t.Errorf("%s: occurrence %v: %q; want %q", j.id, at, got[at], want)
					}
				}
			}
		})
	}
}

// repairCounter counts the watchdog's repairs.
type repairCounter struct {
	endCounter
	n atomic.Int32
}

func (c *repairCounter) Repaired(string) { c.n.Add(1) }

// A small correction of the clock, as NTP makes it (slewed, or stepped
// by less than a second), changes nothing: every occurrence runs once and
// on time, none is skipped, and the watchdog has nothing to repair.
func TestASlewChangesNothing(t *testing.T) {
	t.Parallel()
	repairs := &repairCounter{endCounter: endCounter{ends: map[string][]statemachine.Status{}}}
	h := newHarness(t, engine.Options{Config: embeddedConfig(), Observer: repairs})
	jobs := []stepJob{{id: "p/minutely", expr: "* * * * *"}, {id: "p/quarterly", expr: "*/15 * * * *"}}
	for _, j := range jobs {
		h.define(j.id, j.expr, j.policy, "rec")
	}
	// Corrections of up to 0.4 s either way between one minute's tasks
	// and the next's.
	corrections := []time.Duration{400 * time.Millisecond, -300 * time.Millisecond, -400 * time.Millisecond, 200 * time.Millisecond, 100 * time.Millisecond}
	end := t0.Add(2 * time.Hour)
	for i, at := 0, t0.Add(time.Minute); !at.After(end); i, at = i+1, at.Add(time.Minute) {
		h.runUntil(at)
		h.set(h.clock().Add(corrections[i%len(corrections)]))
	}
	h.runUntil(end.Add(time.Second))
	if _, most := h.tgt.total(); most != 1 {
		t.Errorf("an attempt was launched %d times; want each once", most)
	}
	for _, j := range jobs {
		sched, err := (&engine.Definition{Schedule: j.expr}).Parse(j.id)
		if err != nil {
			t.Fatal(err)
		}
		got := h.occurrences(j, end)
		for at := range sched.Between(t0.Add(time.Nanosecond), end.Add(time.Nanosecond)) {
			if got[at] != "ran" {
				t.Errorf("%s: occurrence %v: %q; want it run", j.id, at, got[at])
			}
		}
	}
	if n := repairs.n.Load(); n > 0 {
		t.Errorf("the watchdog repaired %d times; want nothing to repair", n)
	}
}

// A step forward counts as time that passed, for an attempt under way as
// for the schedule: one whose hard timeout the step passes ends FAILED
// "timed out" at the next watchdog pass, and its remote task is killed,
// as if the time had passed. A process cannot tell an NTP step from time
// that passed while it was suspended (the monotonic clock stops in both),
// and an asynchronous target's task runs on outside the host either way.
// A step short of the hard timeout leaves the attempt running.
func TestAForwardStepPastAHardTimeoutEndsTheAttempt(t *testing.T) {
	t.Parallel()
	for _, step := range stepSizes {
		t.Run(step.String(), func(t *testing.T) {
			t.Parallel()
			h := newAsyncHarness(t)
			id := h.defineHourly("job", 20*time.Minute)
			inv, task := h.launched(id)
			if err := h.swarm.Start(task.ID); err != nil {
				t.Fatal(err)
			}
			stepped := h.clk.Now().Add(step)
			h.clk.Set(stepped)
			h.runUntil(stepped.Add(time.Minute))
			st, msg := h.status(id, inv)
			hardTimeout := 20*time.Minute + statemachine.DefaultConfig.KillGrace
			if step < hardTimeout {
				if st != statemachine.StatusRunning {
					t.Errorf("after a step of %v: %s %q; want RUNNING", step, st, msg)
				}
				return
			}
			if st != statemachine.StatusFailed || !strings.Contains(msg, "timed out") {
				t.Errorf("after a step of %v: %s %q; want FAILED, timed out", step, st, msg)
			}
			if st := h.swarm.Tasks()[0].State; st != "KILLED" {
				t.Errorf("the Swarming task is %s; want KILLED", st)
			}
		})
	}
}
