package statemachine_test

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/schedule"
	sm "github.com/sundial-cron/sundial/statemachine"
)

// runningAt1m brings an every-minute job to the state where the occurrence
// of t0+1m runs (nonces 1-3) and the tick of t0+2m is expected (nonce 3).
func runningAt1m(f *fixture) {
	f.t.Helper()
	f.step(t0, sm.Defined{}, tickLater(at(1*minute), 1))
	f.step(at(1*minute), sm.Tick{Nonce: 1},
		record(o1m, 1, sm.StatusQueued, ""),
		start(o1m.ID, 1, 2, at(1*minute)),
		tickLater(at(2*minute), 3))
	f.step(at(1*minute+1*sec), sm.Starting{Invocation: o1m.ID, Attempt: 1, Nonce: 2},
		record(o1m, 1, sm.StatusLaunching, ""),
		launch(o1m.ID, 1))
	f.step(at(1*minute+2*sec), sm.Launched{Invocation: o1m.ID, Attempt: 1},
		record(o1m, 1, sm.StatusRunning, ""))
	f.state(sm.Running)
}

func TestOverlapSkip(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "* * * * *", sm.Policy{Overlap: sm.OverlapSkip})
	runningAt1m(f)
	// An occurrence that comes while one runs is skipped as overrun; the
	// ticks go on.
	f.step(at(2*minute), sm.Tick{Nonce: 3},
		skippedOne(o2m, sm.SkipOverrun),
		tickLater(at(3*minute), 4))
	f.state(sm.Running)
	// The end starts nothing: the skipped occurrence is gone for good.
	f.step(at(2*minute+30*sec), sm.Ended{Invocation: o1m.ID, Attempt: 1, Succeeded: true},
		record(o1m, 1, sm.StatusSucceeded, ""))
	f.state(sm.Scheduled)
}

func TestOverlapQueueOne(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "* * * * *", sm.Policy{Overlap: sm.OverlapQueueOne})
	runningAt1m(f)
	// The first occurrence to come while one runs waits, silently for now.
	f.step(at(2*minute), sm.Tick{Nonce: 3}, tickLater(at(3*minute), 4))
	if p := f.job().Pending; p == nil || *p != o2m {
		t.Fatalf("pending = %v, want %v", p, o2m)
	}
	// A newer one replaces it; the older is skipped as overrun.
	f.step(at(3*minute), sm.Tick{Nonce: 4},
		skippedOne(o2m, sm.SkipOverrun),
		tickLater(at(4*minute), 5))
	if p := f.job().Pending; p == nil || *p != o3m {
		t.Fatalf("pending = %v, want %v", p, o3m)
	}
	// When the running one ends, the pending one is queued at once.
	f.step(at(3*minute+30*sec), sm.Ended{Invocation: o1m.ID, Attempt: 1, Succeeded: true},
		record(o1m, 1, sm.StatusSucceeded, ""),
		record(o3m, 1, sm.StatusQueued, ""),
		start(o3m.ID, 1, 6, at(3*minute+30*sec)))
	if f.job().Pending != nil {
		t.Fatalf("pending = %v after it was queued", f.job().Pending)
	}
	f.state(sm.Queued)
	// A failure with a retry keeps the slot: the next occurrence waits.
	f.m.Policy.MaxAttempts, f.m.Policy.MinBackoff = 2, 10*sec
	f.step(at(3*minute+31*sec), sm.Starting{Invocation: o3m.ID, Attempt: 1, Nonce: 6},
		record(o3m, 1, sm.StatusLaunching, ""), launch(o3m.ID, 1))
	f.step(at(3*minute+40*sec), sm.Ended{Invocation: o3m.ID, Attempt: 1, Message: "exit 1"},
		record(o3m, 2, sm.StatusRetrying, "attempt 1 failed: exit 1; attempt 2 in 10s"),
		start(o3m.ID, 2, 7, at(3*minute+50*sec)))
	f.step(at(4*minute), sm.Tick{Nonce: 5}, tickLater(at(5*minute), 8))
	if p := f.job().Pending; p == nil || p.At != at(4*minute) {
		t.Fatalf("pending = %v, want the occurrence of t0+4m", p)
	}
}

func TestOverlapAllow(t *testing.T) {
	t.Parallel()
	t.Run("up to MaxConcurrent run at once, the next is skipped as overrun", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{Overlap: sm.OverlapAllow, MaxConcurrent: 2})
		runningAt1m(f)
		f.step(at(2*minute), sm.Tick{Nonce: 3},
			record(o2m, 1, sm.StatusQueued, ""),
			start(o2m.ID, 1, 4, at(2*minute)),
			tickLater(at(3*minute), 5))
		f.step(at(3*minute), sm.Tick{Nonce: 5},
			skippedOne(o3m, sm.SkipOverrun),
			tickLater(at(4*minute), 6))
		if n := len(f.job().Active); n != 2 {
			t.Fatalf("%d unfinished invocations, want 2", n)
		}
		f.state(sm.Running)
		f.step(at(3*minute+30*sec), sm.Ended{Invocation: o1m.ID, Attempt: 1, Succeeded: true},
			record(o1m, 1, sm.StatusSucceeded, ""))
		f.state(sm.Queued) // o2m waits for its StartInvocation
	})
	t.Run("MaxConcurrent 0 counts as 1", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{Overlap: sm.OverlapAllow})
		runningAt1m(f)
		f.step(at(2*minute), sm.Tick{Nonce: 3},
			skippedOne(o2m, sm.SkipOverrun),
			tickLater(at(3*minute), 4))
	})
}

func TestOverlapReplace(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "* * * * *", sm.Policy{Overlap: sm.OverlapReplace})
	runningAt1m(f)
	// The running one is aborted (recorded, then the target told), the new
	// one queued.
	f.step(at(2*minute), sm.Tick{Nonce: 3},
		abortTarget(o1m.ID, 1),
		record(o1m, 1, sm.StatusAborted, "replaced by occurrence "+o2m.ID),
		record(o2m, 1, sm.StatusQueued, ""),
		start(o2m.ID, 1, 4, at(2*minute)),
		tickLater(at(3*minute), 5))
	f.state(sm.Queued)
	// One not launched yet is replaced without calling the target.
	f.step(at(3*minute), sm.Tick{Nonce: 5},
		record(o2m, 1, sm.StatusAborted, "replaced by occurrence "+o3m.ID),
		record(o3m, 1, sm.StatusQueued, ""),
		start(o3m.ID, 1, 6, at(3*minute)),
		tickLater(at(4*minute), 7))
	// The target's late report on the replaced attempt changes nothing.
	f.step(at(3*minute+5*sec), sm.Ended{Invocation: o1m.ID, Attempt: 1, Succeeded: true})
}

// TestCatchup pins what a tick that comes late decides: every missed
// occurrence is recorded, only the latest one runs, and only if it is at
// most max(CatchupWindow, Config.LateTolerance) late; the others within
// that window are superseded, older ones missed.
func TestCatchup(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name          string
		window        time.Duration
		lateTolerance time.Duration
		tickAt        time.Time // when the tick of t0+1m comes
		want          []sm.Action
	}{{
		name:          "window 0: a 10-minute outage of an every-minute job runs the latest, the one within LateTolerance is superseded, the rest missed",
		lateTolerance: 90 * sec,
		tickAt:        at(11 * minute),
		want: []sm.Action{
			skipped(at(1*minute), at(9*minute), 9, sm.SkipMissed),
			skipped(at(10*minute), at(10*minute), 1, sm.SkipSuperseded),
			record(occ(at(11*minute)), 1, sm.StatusQueued, ""),
			start(occ(at(11*minute)).ID, 1, 2, at(11*minute)),
			tickLater(at(12*minute), 3),
		},
	}, {
		name:   "window 0 and no LateTolerance: every occurrence before now is missed, the one due now runs",
		tickAt: at(11 * minute),
		want: []sm.Action{
			skipped(at(1*minute), at(10*minute), 10, sm.SkipMissed),
			record(occ(at(11*minute)), 1, sm.StatusQueued, ""),
			start(occ(at(11*minute)).ID, 1, 2, at(11*minute)),
			tickLater(at(12*minute), 3),
		},
	}, {
		name:          "window 0: back in the middle of a minute, the latest is 30s late and runs",
		lateTolerance: 90 * sec,
		tickAt:        at(10*minute + 30*sec),
		want: []sm.Action{
			skipped(at(1*minute), at(8*minute), 8, sm.SkipMissed),
			skipped(at(9*minute), at(9*minute), 1, sm.SkipSuperseded), // 90s late: not more than LateTolerance
			record(occ(at(10*minute)), 1, sm.StatusQueued, ""),
			start(occ(at(10*minute)).ID, 1, 2, at(10*minute+30*sec)),
			tickLater(at(11*minute), 3),
		},
	}, {
		name:          "window 5m: only the latest runs, the others inside the window are superseded, older ones missed",
		window:        5 * minute,
		lateTolerance: 90 * sec,
		tickAt:        at(11 * minute),
		want: []sm.Action{
			skipped(at(1*minute), at(5*minute), 5, sm.SkipMissed),
			skipped(at(6*minute), at(10*minute), 5, sm.SkipSuperseded),
			record(occ(at(11*minute)), 1, sm.StatusQueued, ""),
			start(occ(at(11*minute)).ID, 1, 2, at(11*minute)),
			tickLater(at(12*minute), 3),
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, "* * * * *", sm.Policy{CatchupWindow: c.window})
			f.m.Config.LateTolerance = c.lateTolerance
			f.step(t0, sm.Defined{}, tickLater(at(1*minute), 1))
			f.step(c.tickAt, sm.Tick{Nonce: 1}, c.want...)
		})
	}
}

// TestCatchupLateness pins the LateTolerance rule at its edges, with a
// schedule that leaves one occurrence in reach: the occurrence runs if it
// is at most max(CatchupWindow, LateTolerance) late, and is missed if later.
func TestCatchupLateness(t *testing.T) {
	t.Parallel()
	o := occ(at(1 * hour))
	for _, c := range []struct {
		name   string
		window time.Duration
		late   time.Duration
		runs   bool
	}{
		{"window 0: on time runs", 0, 0, true},
		{"window 0: LateTolerance late runs", 0, 90 * sec, true},
		{"window 0: a nanosecond past LateTolerance is missed", 0, 90*sec + 1, false},
		{"window 5m: 5m late runs", 5 * minute, 5 * minute, true},
		{"window 5m: a second past 5m is missed", 5 * minute, 5*minute + 1*sec, false},
		{"window 1m (below LateTolerance): 90s late still runs", 1 * minute, 90 * sec, true},
		{"window 1m (below LateTolerance): 91s late is missed", 1 * minute, 91 * sec, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, "0 * * * *", sm.Policy{CatchupWindow: c.window})
			f.step(t0, sm.Defined{}, tickLater(at(1*hour), 1))
			now := at(1 * hour).Add(c.late)
			if c.runs {
				f.step(now, sm.Tick{Nonce: 1},
					record(o, 1, sm.StatusQueued, ""),
					start(o.ID, 1, 2, now),
					tickLater(at(2*hour), 3))
			} else {
				f.step(now, sm.Tick{Nonce: 1},
					skippedOne(o, sm.SkipMissed),
					tickLater(at(2*hour), 2))
			}
		})
	}
}

// TestCatchupAfterLongDowntime: 30 days without a tick never yield more
// than one run (no storm), and the skipped counts add up to every
// occurrence of the schedule in the downtime.
func TestCatchupAfterLongDowntime(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{"* * * * *", "*/5 * * * *", "0 * * * *"} {
		for _, window := range []time.Duration{0, 5 * minute, 1 * hour, 40 * day} {
			t.Run(fmt.Sprintf("%s with window %s", expr, window), func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, expr, sm.Policy{CatchupWindow: window})
				f.m.Now = t0
				if err := f.m.Step(sm.Defined{}); err != nil {
					t.Fatal(err)
				}
				f.m.Actions = nil
				now := at(30*day + 10*sec)
				f.m.Now = now
				if err := f.m.Step(sm.Tick{Nonce: f.job().TickNonce}); err != nil {
					t.Fatal(err)
				}
				want := 0
				for range mustParse(t, expr).Between(t0.Add(1), now.Add(1)) {
					want++
				}
				runs, skippedCount := 0, 0
				for _, a := range f.m.Actions {
					switch a := a.(type) {
					case sm.Record:
						if a.Status != sm.StatusQueued || !a.At.Equal(at(30*day)) {
							t.Fatalf("unexpected %s", formatActions([]sm.Action{a}))
						}
						runs++
					case sm.RecordSkipped:
						skippedCount += a.Count
					}
				}
				if runs != 1 {
					t.Fatalf("%d runs after the downtime, want 1 (the latest, 10s late)\n%s", runs, formatActions(f.m.Actions))
				}
				if runs+skippedCount != want {
					t.Fatalf("%d run + %d skipped, want the %d occurrences of the downtime\n%s", runs, skippedCount, want, formatActions(f.m.Actions))
				}
				if len(f.m.Actions) > 5 {
					t.Fatalf("%d actions: the skips should be ranges, not one a occurrence", len(f.m.Actions))
				}
			})
		}
	}
}

// TestInterval: an interval schedule's next tick is planned one interval
// after the previous invocation ends, never while one runs.
func TestInterval(t *testing.T) {
	t.Parallel()
	t.Run("the next tick counts from the end of the invocation", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "@every 90s", sm.Policy{})
		o := occ(at(90 * sec))
		f.step(t0, sm.Defined{}, tickLater(at(90*sec), 1))
		f.step(at(90*sec), sm.Tick{Nonce: 1},
			record(o, 1, sm.StatusQueued, ""),
			start(o.ID, 1, 2, at(90*sec)))
		f.step(at(91*sec), sm.Starting{Invocation: o.ID, Attempt: 1, Nonce: 2},
			record(o, 1, sm.StatusLaunching, ""), launch(o.ID, 1))
		if f.job().TickNonce != 0 {
			t.Fatalf("a tick is planned while the invocation runs: %s", formatJob(*f.job()))
		}
		// A watchdog pass while it runs plans no tick either.
		f.step(at(5*minute), sm.WatchdogExpired{})
		f.step(at(7*minute), sm.Ended{Invocation: o.ID, Attempt: 1, Succeeded: true},
			record(o, 1, sm.StatusSucceeded, ""),
			tickLater(at(8*minute+30*sec), 3))
		o2 := occ(at(8*minute + 30*sec))
		f.step(at(8*minute+30*sec), sm.Tick{Nonce: 3},
			record(o2, 1, sm.StatusQueued, ""),
			start(o2.ID, 1, 4, at(8*minute+30*sec)))
	})
	t.Run("a failure with a retry plans nothing until the last attempt ends", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "@every 90s", sm.Policy{MaxAttempts: 2, MinBackoff: 1 * minute})
		o := occ(at(90 * sec))
		f.step(t0, sm.Defined{}, tickLater(at(90*sec), 1))
		f.step(at(90*sec), sm.Tick{Nonce: 1}, record(o, 1, sm.StatusQueued, ""), start(o.ID, 1, 2, at(90*sec)))
		f.step(at(90*sec), sm.Starting{Invocation: o.ID, Attempt: 1, Nonce: 2}, record(o, 1, sm.StatusLaunching, ""), launch(o.ID, 1))
		f.step(at(2*minute), sm.Ended{Invocation: o.ID, Attempt: 1, Message: "exit 1"},
			record(o, 2, sm.StatusRetrying, "attempt 1 failed: exit 1; attempt 2 in 1m0s"),
			start(o.ID, 2, 3, at(3*minute)))
		f.step(at(3*minute), sm.Starting{Invocation: o.ID, Attempt: 2, Nonce: 3}, record(o, 2, sm.StatusLaunching, ""), launch(o.ID, 2))
		f.step(at(4*minute), sm.Ended{Invocation: o.ID, Attempt: 2, Message: "exit 1"},
			record(o, 2, sm.StatusFailed, "exit 1"),
			tickLater(at(5*minute+30*sec), 4))
	})
	t.Run("an interval occurrence that comes during a manual run is skipped, and the next counts from that run's end", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "@every 90s", sm.Policy{})
		f.step(t0, sm.Defined{}, tickLater(at(90*sec), 1))
		m1 := manual(1, at(10*sec))
		f.step(at(10*sec), sm.Triggered{}, record(m1, 1, sm.StatusQueued, ""), start("manual-1", 1, 2, at(10*sec)))
		f.step(at(11*sec), sm.Starting{Invocation: "manual-1", Attempt: 1, Nonce: 2}, record(m1, 1, sm.StatusLaunching, ""), launch("manual-1", 1))
		f.step(at(90*sec), sm.Tick{Nonce: 1}, skippedOne(occ(at(90*sec)), sm.SkipOverrun))
		f.step(at(2*minute), sm.Ended{Invocation: "manual-1", Attempt: 1, Succeeded: true},
			record(m1, 1, sm.StatusSucceeded, ""),
			tickLater(at(3*minute+30*sec), 3))
	})
	t.Run("a long outage yields one run, not a replay of every interval", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "@every 90s", sm.Policy{})
		f.step(t0, sm.Defined{}, tickLater(at(90*sec), 1))
		o := occ(at(90 * sec))
		f.step(at(3*hour), sm.Tick{Nonce: 1}, record(o, 1, sm.StatusQueued, ""), start(o.ID, 1, 2, at(3*hour)))
	})
}

func TestAutoDisable(t *testing.T) {
	t.Parallel()
	reason := sm.Reason{Kind: sm.ReasonAutoDisabled, Note: "after 2 failed invocations in a row"}
	// failOnce runs the occurrence the tick of nonce n queues and fails it.
	t.Run("N failures in a row disable the job with a reason, and Defined enables it with Failures reset", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{AutoDisableAfter: 2})
		runningAt1m(f)
		f.step(at(1*minute+30*sec), sm.Ended{Invocation: o1m.ID, Attempt: 1, Message: "exit 1"},
			record(o1m, 1, sm.StatusFailed, "exit 1"))
		if f.job().Failures != 1 {
			t.Fatalf("Failures = %d, want 1", f.job().Failures)
		}
		f.state(sm.Scheduled)
		f.step(at(2*minute), sm.Tick{Nonce: 3},
			record(o2m, 1, sm.StatusQueued, ""), start(o2m.ID, 1, 4, at(2*minute)), tickLater(at(3*minute), 5))
		f.step(at(2*minute), sm.Starting{Invocation: o2m.ID, Attempt: 1, Nonce: 4},
			record(o2m, 1, sm.StatusLaunching, ""), launch(o2m.ID, 1))
		f.step(at(2*minute+30*sec), sm.Ended{Invocation: o2m.ID, Attempt: 1, Message: "exit 1"},
			record(o2m, 1, sm.StatusFailed, "exit 1"))
		f.state(sm.Disabled)
		if j := f.job(); j.Reason != reason || j.Failures != 2 || j.TickNonce != 0 {
			t.Fatalf("job %s, want DISABLED (%s) with 2 failures and no tick", formatJob(*j), reason)
		}
		f.refused(at(2*minute+40*sec), sm.Triggered{})
		// The tick it had is stale now.
		f.step(at(3*minute), sm.Tick{Nonce: 5})
		f.step(at(10*minute), sm.Defined{}, tickLater(at(11*minute), 6))
		f.state(sm.Scheduled)
		if j := f.job(); j.Reason != (sm.Reason{}) || j.Failures != 0 {
			t.Fatalf("job %s, want Failures reset and no reason", formatJob(*j))
		}
	})
	t.Run("a success in between starts the count again", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{AutoDisableAfter: 2})
		f.m.Job.Failures = 1
		runningAt1m(f)
		f.step(at(1*minute+30*sec), sm.Ended{Invocation: o1m.ID, Attempt: 1, Succeeded: true},
			record(o1m, 1, sm.StatusSucceeded, ""))
		if f.job().Failures != 0 {
			t.Fatalf("Failures = %d after a success", f.job().Failures)
		}
	})
	t.Run("failed attempts that are retried do not count, only failed invocations", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{AutoDisableAfter: 1, MaxAttempts: 2})
		runningAt1m(f)
		f.step(at(1*minute+30*sec), sm.Ended{Invocation: o1m.ID, Attempt: 1, Message: "exit 1"},
			record(o1m, 2, sm.StatusRetrying, "attempt 1 failed: exit 1; attempt 2 in 0s"),
			start(o1m.ID, 2, 4, at(1*minute+30*sec)))
		f.state(sm.Queued)
	})
	t.Run("the disable aborts invocations not launched yet and lets launched ones finish", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{AutoDisableAfter: 1, Overlap: sm.OverlapAllow, MaxConcurrent: 3})
		runningAt1m(f)
		f.step(at(2*minute), sm.Tick{Nonce: 3},
			record(o2m, 1, sm.StatusQueued, ""), start(o2m.ID, 1, 4, at(2*minute)), tickLater(at(3*minute), 5))
		f.step(at(2*minute+10*sec), sm.Ended{Invocation: o1m.ID, Attempt: 1, Message: "exit 1"},
			record(o1m, 1, sm.StatusFailed, "exit 1"),
			record(o2m, 1, sm.StatusAborted, "the job was disabled: auto-disabled after 1 failed invocations in a row"))
		f.state(sm.Disabled)
		// Its StartInvocation is stale now: nothing launches.
		f.step(at(2*minute+11*sec), sm.Starting{Invocation: o2m.ID, Attempt: 1, Nonce: 4})
	})
	t.Run("occurrences due but not ticked yet are recorded as skipped: disabled, not lost", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{AutoDisableAfter: 1})
		runningAt1m(f)
		// The tick of t0+2m is late; the failure comes first.
		f.step(at(3*minute+10*sec), sm.Ended{Invocation: o1m.ID, Attempt: 1, Message: "exit 1"},
			record(o1m, 1, sm.StatusFailed, "exit 1"),
			skipped(at(2*minute), at(3*minute), 2, sm.SkipDisabled))
		f.state(sm.Disabled)
		f.step(at(3*minute+11*sec), sm.Tick{Nonce: 3})
	})
	t.Run("a paused job's occurrences are recorded as skipped: paused when it is auto-disabled", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{AutoDisableAfter: 1})
		runningAt1m(f)
		f.step(at(1*minute+5*sec), sm.PauseRequested{Note: "admin"})
		f.step(at(3*minute+10*sec), sm.Ended{Invocation: o1m.ID, Attempt: 1, Message: "exit 1"},
			record(o1m, 1, sm.StatusFailed, "exit 1"),
			skipped(at(2*minute), at(3*minute), 2, sm.SkipPaused))
		f.state(sm.Disabled)
		// Resume of a DISABLED job does nothing: no second account.
		f.step(at(4*minute), sm.ResumeRequested{})
	})
}

// TestRemovedJobRetriesNothing: an attempt left to finish when the job was
// removed fails without a retry, whatever attempts the policy has left.
func TestRemovedJobRetriesNothing(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		event func() sm.Event
	}{
		{"the target reports a failure", func() sm.Event { return sm.Ended{Invocation: o1m.ID, Attempt: 1, Message: "exit 1"} }},
		{"the watchdog finds it past its hard timeout", func() sm.Event { return sm.WatchdogExpired{} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, "* * * * *", sm.Policy{MaxAttempts: 3, MinBackoff: 10 * sec})
			runningAt1m(f)
			f.step(at(1*minute+30*sec), sm.Removed{Reason: removedFromConfig})
			f.state(sm.Disabled)
			now := at(1*minute + 40*sec)
			msg := "exit 1"
			var want []sm.Action
			if _, ok := c.event().(sm.WatchdogExpired); ok {
				now, msg = at(1*minute+1*sec+10*minute+30*sec), "timed out: no outcome 10m30s after the launch"
				want = append(want, abortTarget(o1m.ID, 1))
			}
			want = append(want, record(o1m, 1, sm.StatusFailed, msg))
			f.step(now, c.event(), want...)
			f.state(sm.Disabled)
			if len(f.job().Active) != 0 || !f.job().WatchdogTimerTs.IsZero() {
				t.Fatalf("job %s, want nothing left to wait for", formatJob(*f.job()))
			}
		})
	}
}

// TestJitterIsFNVOfTheJobAndOccurrence: Jitter is, to the millisecond,
// the FNV-1a hash of the job id and the occurrence id that every release
// has delayed launches by, so an upgrade moves no jittered launch.
func TestJitterIsFNVOfTheJobAndOccurrence(t *testing.T) {
	t.Parallel()
	want := func(jobID string, at time.Time, max time.Duration) time.Duration {
		h := fnv.New64a()
		h.Write([]byte(jobID))
		h.Write([]byte(sm.OccurrenceID(at)))
		return time.Duration(h.Sum64()%uint64(max/time.Millisecond)) * time.Millisecond
	}
	r := rand.New(rand.NewPCG(1, 2))
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for range 10000 {
		id := fmt.Sprintf("proj-%d/job-%x", r.IntN(100), r.Uint64())
		at := time.Unix(r.Int64N(1<<33), r.Int64N(2)*r.Int64N(1e9)).In(ny)
		max := time.Duration(1+r.Int64N(int64(time.Hour/time.Millisecond))) * time.Millisecond
		if got, want := sm.Jitter(id, at, max), want(id, at, max); got != want {
			t.Fatalf("Jitter(%q, %s, %s) = %s, want %s", id, at, max, got, want)
		}
	}
}

// TestJitter: Jitter is a stable hash below the maximum, in whole
// milliseconds, that differs between occurrences and between jobs; the
// tick comes at occurrence+jitter while the record keeps the scheduled time.
func TestJitter(t *testing.T) {
	t.Parallel()
	max := 30 * sec
	distinct := map[time.Duration]bool{}
	for i := range 60 {
		o := at(time.Duration(i) * minute)
		j := sm.Jitter(testJobID, o, max)
		if j != sm.Jitter(testJobID, o, max) {
			t.Fatalf("Jitter(%s) is not stable", off(o))
		}
		if j < 0 || j >= max || j%time.Millisecond != 0 {
			t.Fatalf("Jitter(%s) = %s, want whole milliseconds in [0, %s)", off(o), j, max)
		}
		distinct[j] = true
	}
	if len(distinct) < 50 {
		t.Fatalf("60 occurrences got only %d distinct jitters", len(distinct))
	}
	if sm.Jitter(testJobID, t0, max) == sm.Jitter("proj/other", t0, max) && sm.Jitter(testJobID, at(1*minute), max) == sm.Jitter("proj/other", at(1*minute), max) {
		t.Fatalf("two jobs get the same jitters")
	}
	if j := sm.Jitter(testJobID, t0, 0); j != 0 {
		t.Fatalf("Jitter with max 0 = %s", j)
	}
	if j := sm.Jitter(testJobID, t0, time.Millisecond-1); j != 0 {
		t.Fatalf("Jitter with max below a millisecond = %s", j)
	}

	f := newFixture(t, "* * * * *", sm.Policy{Jitter: max})
	j1 := sm.Jitter(testJobID, at(1*minute), max)
	j2 := sm.Jitter(testJobID, at(2*minute), max)
	if j1 == 0 {
		t.Fatal("the test needs a job id whose jitter at t0+1m is not 0")
	}
	f.step(t0, sm.Defined{}, tickLater(at(1*minute).Add(j1), 1))
	if !f.job().NextAt.Equal(at(1 * minute)) {
		t.Fatalf("NextAt = %s, want the scheduled time", off(f.job().NextAt))
	}
	// At the scheduled time the tick is early: its jitter is not over.
	f.step(at(1*minute), sm.Tick{Nonce: 1}, tickLater(at(1*minute).Add(j1), 2))
	now := at(1 * minute).Add(j1)
	f.step(now, sm.Tick{Nonce: 2},
		record(o1m, 1, sm.StatusQueued, ""), // the scheduled time, not the jittered one
		start(o1m.ID, 1, 3, now),
		tickLater(at(2*minute).Add(j2), 4))

	// Lateness counts from the jittered time: LateTolerance past it still
	// runs, a nanosecond more is missed.
	o := occ(at(1 * hour))
	jh := sm.Jitter(testJobID, o.At, max)
	for _, late := range []time.Duration{90 * sec, 90*sec + 1} {
		f := newFixture(t, "0 * * * *", sm.Policy{Jitter: max})
		f.step(t0, sm.Defined{}, tickLater(o.At.Add(jh), 1))
		now := o.At.Add(jh + late)
		next := at(2 * hour)
		if late == 90*sec {
			f.step(now, sm.Tick{Nonce: 1}, record(o, 1, sm.StatusQueued, ""), start(o.ID, 1, 2, now),
				tickLater(next.Add(sm.Jitter(testJobID, next, max)), 3))
		} else {
			f.step(now, sm.Tick{Nonce: 1}, skippedOne(o, sm.SkipMissed),
				tickLater(next.Add(sm.Jitter(testJobID, next, max)), 2))
		}
	}
}

// TestDSTGapIsRecorded: a 02:30 job in New York with gap: skip has no fire
// time on 2026-03-08; the tick after the gap records the swallowed one as
// skipped: dst_gap (invariant 5), apart from the occurrences it accounts
// for as usual.
func TestDSTGapIsRecorded(t *testing.T) {
	t.Parallel()
	ny, err := schedule.LoadZone("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	s, err := schedule.Parse("30 2 * * *", schedule.Options{JobID: testJobID, Location: ny, Gap: schedule.GapSkip})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, "* * * * *", sm.Policy{})
	f.m.Schedule = s
	day := func(d int) time.Time { return time.Date(2026, 3, d, 2, 30, 0, 0, ny) }
	gapEnd := time.Date(2026, 3, 8, 3, 0, 0, 0, ny)
	f.step(day(7).Add(-time.Hour), sm.Defined{}, tickLater(day(7), 1))
	f.step(day(7), sm.Tick{Nonce: 1},
		record(occ(day(7)), 1, sm.StatusQueued, ""),
		start(sm.OccurrenceID(day(7)), 1, 2, day(7)),
		tickLater(day(9), 3))
	f.step(day(7).Add(time.Minute), sm.Starting{Invocation: sm.OccurrenceID(day(7)), Attempt: 1, Nonce: 2},
		record(occ(day(7)), 1, sm.StatusLaunching, ""), launch(sm.OccurrenceID(day(7)), 1))
	f.step(day(7).Add(2*time.Minute), sm.Ended{Invocation: sm.OccurrenceID(day(7)), Attempt: 1, Succeeded: true},
		record(occ(day(7)), 1, sm.StatusSucceeded, ""))
	f.step(day(9), sm.Tick{Nonce: 3},
		sm.RecordSkipped{ID: sm.GapID(gapEnd), First: gapEnd, Last: gapEnd, Count: 1, Reason: sm.SkipDSTGap},
		record(occ(day(9)), 1, sm.StatusQueued, ""),
		start(sm.OccurrenceID(day(9)), 1, 4, day(9)),
		tickLater(day(10), 5))
}
