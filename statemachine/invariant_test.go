package statemachine_test

import (
	"testing"
	"time"

	sm "github.com/sundial-cron/sundial/statemachine"
)

// The invariants of DESIGN.md that live at this layer, one test each. The
// engine's tests cover the others (2 write before call end to end, 4 no job
// is stuck, 7 one project cannot hurt another); here write before call is
// checked on every step's actions (checkWriteBeforeCall) and the watchdog
// timer that invariant 4 rests on by checkWatchdog.

// stale delivers e and fails unless it changes nothing at all.
func (f *fixture) stale(now time.Time, e sm.Event) {
	f.t.Helper()
	before := f.m.Job.Clone()
	f.step(now, e)
	if !sameJob(f.m.Job, before) {
		f.t.Fatalf("at %s, the stale %s changed the job\n got %s\nwant %s", off(now), describe(e), formatJob(f.m.Job), formatJob(before))
	}
}

// runSims runs n random sequences of the property test with fixed seeds;
// the sim checks every invariant after every step and at the end.
func runSims(t *testing.T, n int, seed uint64) {
	t.Helper()
	if testing.Short() {
		n /= 10
	}
	for c := range uint64(n) {
		s := newSim(t, seed+c, propSchedules[int(c)%len(propSchedules)], randomPolicy(newRand(seed+c)))
		s.step(sm.Defined{}, false)
		for range 150 {
			s.randomStep()
		}
		s.finish()
	}
}

func TestInvariant1_AtMostOneLaunchPerOccurrence(t *testing.T) {
	t.Parallel()
	t.Run("the invocation id is the occurrence's, whatever zone it is read in", func(t *testing.T) {
		t.Parallel()
		ny, err := time.LoadLocation("America/New_York")
		if err != nil {
			t.Fatal(err)
		}
		if a, b := sm.OccurrenceID(at(1*minute)), sm.OccurrenceID(at(1*minute).In(ny)); a != b || a != "20260302T100100Z" {
			t.Fatalf("OccurrenceID = %q and %q, want 20260302T100100Z both", a, b)
		}
		if a, b := sm.OccurrenceID(at(1*minute)), sm.OccurrenceID(at(1*minute+1)); a == b {
			t.Fatalf("two instants share the id %q", a)
		}
	})
	t.Run("duplicate, late and re-issued deliveries launch an occurrence once", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{MaxAttempts: 2})
		f.step(t0, sm.Defined{}, tickLater(at(1*minute), 1))
		f.step(at(1*minute), sm.Tick{Nonce: 1},
			record(o1m, 1, sm.StatusQueued, ""), start(o1m.ID, 1, 2, at(1*minute)), tickLater(at(2*minute), 3))
		// The same tick delivered again queues nothing.
		f.stale(at(1*minute+1*sec), sm.Tick{Nonce: 1})
		// The StartInvocation is late; the watchdog re-issues it.
		f.step(at(1*minute+30*sec), sm.WatchdogExpired{}, start(o1m.ID, 1, 4, at(1*minute+30*sec)))
		// Then the original comes after all: stale.
		f.stale(at(1*minute+31*sec), sm.Starting{Invocation: o1m.ID, Attempt: 1, Nonce: 2})
		f.step(at(1*minute+31*sec), sm.Starting{Invocation: o1m.ID, Attempt: 1, Nonce: 4},
			record(o1m, 1, sm.StatusLaunching, ""), launch(o1m.ID, 1))
		// The re-issued one delivered twice: while the first process may
		// still be on its way to the target, the second is turned away;
		// after LaunchGrace it asks the target, it does not launch.
		f.inProgress(at(1*minute+32*sec), sm.Starting{Invocation: o1m.ID, Attempt: 1, Nonce: 4})
		f.step(at(1*minute+41*sec), sm.Starting{Invocation: o1m.ID, Attempt: 1, Nonce: 4}, resolve(o1m.ID, 1))
		f.step(at(1*minute+42*sec), sm.Launched{Invocation: o1m.ID, Attempt: 1}, record(o1m, 1, sm.StatusRunning, ""))
		f.stale(at(1*minute+43*sec), sm.Starting{Invocation: o1m.ID, Attempt: 1, Nonce: 4})
		// A retry is the next attempt of the same invocation, never the
		// same attempt again.
		f.step(at(1*minute+45*sec), sm.Ended{Invocation: o1m.ID, Attempt: 1, Message: "exit 1"},
			record(o1m, 2, sm.StatusRetrying, "attempt 1 failed: exit 1; attempt 2 in 0s"),
			start(o1m.ID, 2, 5, at(1*minute+45*sec)))
		f.stale(at(1*minute+46*sec), sm.Starting{Invocation: o1m.ID, Attempt: 1, Nonce: 4})
		f.step(at(1*minute+46*sec), sm.Starting{Invocation: o1m.ID, Attempt: 2, Nonce: 5},
			record(o1m, 2, sm.StatusLaunching, ""), launch(o1m.ID, 2))
		f.step(at(1*minute+50*sec), sm.Ended{Invocation: o1m.ID, Attempt: 2, Succeeded: true},
			record(o1m, 2, sm.StatusSucceeded, ""))
		f.stale(at(1*minute+51*sec), sm.Starting{Invocation: o1m.ID, Attempt: 2, Nonce: 5})
		// A watchdog pass with nothing overdue re-issues nothing.
		f.stale(at(1*minute+52*sec), sm.WatchdogExpired{})
	})
	t.Run("a tick that launches its occurrence itself is its start, delivered again or not", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{MaxAttempts: 2, Overlap: sm.OverlapAllow, MaxConcurrent: 3})
		f.step(t0, sm.Defined{}, tickLater(at(1*minute), 1))
		// No StartInvocation: the attempt takes the tick's nonce, and its
		// LAUNCHING is written in the tick's step, before the Launch.
		f.step(at(1*minute), sm.Tick{Nonce: 1, Start: true},
			record(o1m, 1, sm.StatusQueued, ""), tickLater(at(2*minute), 3),
			record(o1m, 1, sm.StatusLaunching, ""), launch(o1m.ID, 1))
		// The tick's task delivered again is the start delivered again:
		// turned away while the launch may be under way, then a question
		// to the target, never a second Launch.
		f.inProgress(at(1*minute+1*sec), sm.Tick{Nonce: 1, Start: true})
		f.step(at(1*minute+11*sec), sm.Tick{Nonce: 1, Start: true}, resolve(o1m.ID, 1))
		f.step(at(1*minute+12*sec), sm.Launched{Invocation: o1m.ID, Attempt: 1}, record(o1m, 1, sm.StatusRunning, ""))
		f.stale(at(1*minute+13*sec), sm.Tick{Nonce: 1, Start: true})
		// The next tick, with another attempt still running, launches its
		// own occurrence the same way; one without Start enqueues it.
		f.step(at(2*minute), sm.Tick{Nonce: 3, Start: true},
			record(o2m, 1, sm.StatusQueued, ""), tickLater(at(3*minute), 5),
			record(o2m, 1, sm.StatusLaunching, ""), launch(o2m.ID, 1))
		f.step(at(3*minute), sm.Tick{Nonce: 5},
			record(o3m, 1, sm.StatusQueued, ""), start(o3m.ID, 1, 6, at(3*minute)), tickLater(at(4*minute), 7))
	})
	t.Run("random sequences: one Launch per attempt unless the target never saw it", func(t *testing.T) {
		t.Parallel()
		runSims(t, 300, 0x1a)
	})
}

func TestInvariant3_FailClosedOnAmbiguity(t *testing.T) {
	t.Parallel()
	// launching brings o1m to LAUNCHING (nonces 1-3): the Launch went out
	// and no outcome came back.
	launching := func(t *testing.T, p sm.Policy) *fixture {
		f := newFixture(t, "* * * * *", p)
		f.step(t0, sm.Defined{}, tickLater(at(1*minute), 1))
		f.step(at(1*minute), sm.Tick{Nonce: 1},
			record(o1m, 1, sm.StatusQueued, ""), start(o1m.ID, 1, 2, at(1*minute)), tickLater(at(2*minute), 3))
		f.step(at(1*minute+1*sec), sm.Starting{Invocation: o1m.ID, Attempt: 1, Nonce: 2},
			record(o1m, 1, sm.StatusLaunching, ""), launch(o1m.ID, 1))
		// The process that called the target died; the task comes again:
		// the machine asks the target instead of launching.
		f.step(at(1*minute+40*sec), sm.Starting{Invocation: o1m.ID, Attempt: 1, Nonce: 2}, resolve(o1m.ID, 1))
		return f
	}
	retries := sm.Policy{MaxAttempts: 3, MinBackoff: 10 * sec}
	t.Run("an unknown outcome ends FAILED: launch outcome unknown, not relaunched nor retried", func(t *testing.T) {
		t.Parallel()
		f := launching(t, retries)
		f.step(at(1*minute+41*sec), sm.OutcomeUnknown{Invocation: o1m.ID, Attempt: 1},
			record(o1m, 1, sm.StatusFailed, "launch outcome unknown"))
		f.state(sm.Scheduled)
		f.stale(at(1*minute+42*sec), sm.Starting{Invocation: o1m.ID, Attempt: 1, Nonce: 2})
		f.stale(at(1*minute+43*sec), sm.NotLaunched{Invocation: o1m.ID, Attempt: 1})
		f.stale(at(1*minute+44*sec), sm.Ended{Invocation: o1m.ID, Attempt: 1, Succeeded: true})
	})
	t.Run("an unknown outcome of an idempotent target is retried as the next attempt, and max_attempts bounds it", func(t *testing.T) {
		t.Parallel()
		// Each launch kills the server: the task comes again after the
		// restart, and the target cannot tell.
		f := launching(t, sm.Policy{Idempotent: true, MaxAttempts: 2, MinBackoff: 10 * sec})
		f.step(at(1*minute+41*sec), sm.OutcomeUnknown{Invocation: o1m.ID, Attempt: 1},
			record(o1m, 2, sm.StatusRetrying, "attempt 1 failed: launch outcome unknown; attempt 2 in 10s"),
			start(o1m.ID, 2, 4, at(1*minute+51*sec)))
		f.step(at(1*minute+51*sec), sm.Starting{Invocation: o1m.ID, Attempt: 2, Nonce: 4},
			record(o1m, 2, sm.StatusLaunching, ""), launch(o1m.ID, 2))
		f.step(at(2*minute+30*sec), sm.Starting{Invocation: o1m.ID, Attempt: 2, Nonce: 4}, resolve(o1m.ID, 2))
		f.step(at(2*minute+31*sec), sm.OutcomeUnknown{Invocation: o1m.ID, Attempt: 2},
			record(o1m, 2, sm.StatusFailed, "launch outcome unknown"))
		f.stale(at(2*minute+32*sec), sm.Starting{Invocation: o1m.ID, Attempt: 2, Nonce: 4})
		if len(f.job().Active) != 0 {
			t.Fatalf("job %s, want the invocation over", formatJob(*f.job()))
		}
	})
	t.Run("a target that says it never saw the launch gets it now", func(t *testing.T) {
		t.Parallel()
		f := launching(t, sm.Policy{})
		f.step(at(1*minute+41*sec), sm.NotLaunched{Invocation: o1m.ID, Attempt: 1},
			record(o1m, 1, sm.StatusLaunching, "the target never received the launch; launching it now"),
			launch(o1m.ID, 1))
	})
	t.Run("a target that says it ran it reports the outcome", func(t *testing.T) {
		t.Parallel()
		f := launching(t, sm.Policy{})
		f.step(at(1*minute+41*sec), sm.Launched{Invocation: o1m.ID, Attempt: 1}, record(o1m, 1, sm.StatusRunning, ""))
		f.step(at(2*minute+41*sec), sm.Ended{Invocation: o1m.ID, Attempt: 1, Succeeded: true}, record(o1m, 1, sm.StatusSucceeded, ""))
	})
	t.Run("no answer before the hard timeout ends FAILED, and is not retried", func(t *testing.T) {
		t.Parallel()
		f := launching(t, retries)
		// The ticks go on meanwhile, as they would.
		f.step(at(2*minute), sm.Tick{Nonce: 3}, skippedOne(o2m, sm.SkipOverrun), tickLater(at(3*minute), 4))
		hard := at(1*minute + 1*sec + 10*minute + 30*sec)
		// The tick of t0+3m was lost meanwhile: the watchdog repairs both.
		f.step(hard, sm.WatchdogExpired{},
			tickLater(hard, 5),
			abortTarget(o1m.ID, 1),
			record(o1m, 1, sm.StatusFailed, "timed out: no outcome 10m30s after the launch"))
		if len(f.job().Active) != 0 {
			t.Fatalf("job %s, want the invocation over", formatJob(*f.job()))
		}
	})
}

func TestInvariant5_NothingLostSilently(t *testing.T) {
	t.Parallel()
	// Each reason an occurrence does not become an invocation, recorded.
	t.Run("overrun", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{})
		runningAt1m(f)
		f.step(at(2*minute), sm.Tick{Nonce: 3}, skippedOne(o2m, sm.SkipOverrun), tickLater(at(3*minute), 4))
	})
	t.Run("missed and superseded", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{CatchupWindow: 2 * minute})
		f.step(t0, sm.Defined{}, tickLater(at(1*minute), 1))
		f.step(at(5*minute), sm.Tick{Nonce: 1},
			skipped(at(1*minute), at(2*minute), 2, sm.SkipMissed),
			skipped(at(3*minute), at(4*minute), 2, sm.SkipSuperseded),
			record(occ(at(5*minute)), 1, sm.StatusQueued, ""),
			start(occ(at(5*minute)).ID, 1, 2, at(5*minute)),
			tickLater(at(6*minute), 3))
	})
	t.Run("paused", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{})
		f.step(t0, sm.Defined{}, tickLater(at(1*minute), 1))
		f.step(at(10*sec), sm.PauseRequested{Note: "admin"})
		f.step(at(3*minute+30*sec), sm.ResumeRequested{},
			skipped(at(1*minute), at(3*minute), 3, sm.SkipPaused), tickLater(at(4*minute), 2))
	})
	t.Run("pending when paused", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{Overlap: sm.OverlapQueueOne})
		runningAt1m(f)
		f.step(at(2*minute), sm.Tick{Nonce: 3}, tickLater(at(3*minute), 4))
		f.step(at(2*minute+10*sec), sm.PauseRequested{Note: "admin"}, skippedOne(o2m, sm.SkipPaused))
	})
	t.Run("pending when removed", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{Overlap: sm.OverlapQueueOne})
		runningAt1m(f)
		f.step(at(2*minute), sm.Tick{Nonce: 3}, tickLater(at(3*minute), 4))
		f.step(at(2*minute+10*sec), sm.Removed{Reason: removedFromConfig}, skippedOne(o2m, sm.SkipDisabled))
	})
	t.Run("due when auto-disabled", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{AutoDisableAfter: 1})
		runningAt1m(f)
		f.step(at(2*minute+20*sec), sm.Ended{Invocation: o1m.ID, Attempt: 1, Message: "exit 1"},
			record(o1m, 1, sm.StatusFailed, "exit 1"),
			skipped(at(2*minute), at(2*minute), 1, sm.SkipDisabled))
	})
	t.Run("a manual trigger that overruns", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{})
		runningAt1m(f)
		f.step(at(1*minute+10*sec), sm.Triggered{}, skippedOne(manual(1, at(1*minute+10*sec)), sm.SkipOverrun))
	})
	// And the oracle over random sequences: every occurrence while the job
	// was enabled is QUEUED, pending or skipped, exactly once.
	t.Run("random sequences", func(t *testing.T) {
		t.Parallel()
		runSims(t, 300, 0x5a)
	})
}

func TestInvariant6_StaleIsHarmless(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "* * * * *", sm.Policy{})
	f.step(t0, sm.Defined{}, tickLater(at(1*minute), 1))
	// A redefinition makes the tick it replaced stale.
	f.step(at(10*sec), sm.Defined{}, tickLater(at(1*minute), 2))
	f.stale(at(1*minute), sm.Tick{Nonce: 1})
	f.step(at(1*minute), sm.Tick{Nonce: 2},
		record(o1m, 1, sm.StatusQueued, ""), start(o1m.ID, 1, 3, at(1*minute)), tickLater(at(2*minute), 4))
	// An early tick re-schedules under a new nonce: the old copy is stale.
	f.stale(at(1*minute), sm.Tick{Nonce: 2})
	// A pause makes the expected tick stale.
	f.step(at(1*minute+5*sec), sm.PauseRequested{Note: "admin"})
	f.stale(at(2*minute), sm.Tick{Nonce: 4})
	// An abort makes the invocation's tasks and reports stale.
	f.step(at(2*minute), sm.AbortRequested{Invocation: o1m.ID}, record(o1m, 1, sm.StatusAborted, "aborted by an admin"))
	f.stale(at(2*minute+1*sec), sm.Starting{Invocation: o1m.ID, Attempt: 1, Nonce: 3})
	f.stale(at(2*minute+1*sec), sm.Launched{Invocation: o1m.ID, Attempt: 1})
	f.stale(at(2*minute+1*sec), sm.Ended{Invocation: o1m.ID, Attempt: 1, Succeeded: true})
	f.stale(at(2*minute+1*sec), sm.NotLaunched{Invocation: o1m.ID, Attempt: 1})
	f.stale(at(2*minute+1*sec), sm.OutcomeUnknown{Invocation: o1m.ID, Attempt: 1})
	f.step(at(2*minute+30*sec), sm.ResumeRequested{}, skipped(at(2*minute), at(2*minute), 1, sm.SkipPaused), tickLater(at(3*minute), 5))
	f.stale(at(3*minute), sm.Tick{Nonce: 4})
	// A removal makes everything stale, the watchdog included.
	f.step(at(2*minute+40*sec), sm.Removed{Reason: removedFromConfig})
	f.stale(at(3*minute), sm.Tick{Nonce: 5})
	f.stale(at(3*minute), sm.WatchdogExpired{})
	f.stale(at(3*minute), sm.ResumeRequested{})
	// And over random sequences: every delivery the sim knows is stale
	// (an old tick, an old StartInvocation, a report on an ended attempt)
	// changes nothing, and a refused request changes nothing either.
	runSims(t, 300, 0x6a)
}
