package statemachine_test

import (
	"testing"
	"time"

	sm "github.com/sundial-cron/sundial/statemachine"
)

// pollCfg is cfg with polling on: the first poll a minute after the launch,
// then waits as long as the attempt has run, at most ten minutes.
var pollCfg = func() sm.Config {
	c := cfg
	c.MinPoll, c.MaxPoll = minute, 10*minute
	return c
}()

func pollLater(id string, attempt int, nonce int64, t time.Time) sm.Action {
	return sm.PollLater{Invocation: id, Attempt: attempt, Nonce: nonce, At: t}
}

func check(id string, attempt int) sm.Action { return sm.Check{Invocation: id, Attempt: attempt} }

// runningFixture is an hourly job (its next tick far from what the tests
// look at) whose occurrence o1m was launched at 1m1s and
// accepted by an asynchronous target at 1m2s: RUNNING, its first poll
// (nonce 4) due a minute after it, at 2m2s, its hard timeout 10m30s after the launch.
func runningFixture(t *testing.T, p sm.Policy) *fixture {
	t.Helper()
	f := newFixture(t, "1 * * * *", p)
	f.m.Config = pollCfg
	f.step(t0, sm.Defined{}, tickLater(at(1*minute), 1))
	f.step(at(1*minute), sm.Tick{Nonce: 1},
		record(o1m, 1, sm.StatusQueued, ""), start(o1m.ID, 1, 2, at(1*minute)), tickLater(at(61*minute), 3))
	f.step(at(1*minute+1*sec), sm.Starting{Invocation: o1m.ID, Attempt: 1, Nonce: 2},
		record(o1m, 1, sm.StatusLaunching, ""), launch(o1m.ID, 1))
	f.step(at(1*minute+2*sec), sm.Launched{Invocation: o1m.ID, Attempt: 1},
		record(o1m, 1, sm.StatusRunning, ""), pollLater(o1m.ID, 1, 4, at(2*minute+2*sec)))
	return f
}

func TestPoll_WaitsDoubleFromMinPollUpToMaxPoll(t *testing.T) {
	t.Parallel()
	f := runningFixture(t, sm.Policy{Timeout: 2 * hour})
	// Each poll asks the target and schedules the next one as far ahead as
	// the attempt has run since its launch at 1m1s: 61s, 122s, 244s,
	// 488s, then the 10m cap.
	due := []time.Time{
		at(2*minute + 2*sec), at(3*minute + 3*sec), at(5*minute + 5*sec), at(9*minute + 9*sec),
		at(17*minute + 17*sec), at(27*minute + 17*sec), at(37*minute + 17*sec),
	}
	for i := range len(due) - 1 {
		nonce := int64(4 + i)
		f.step(due[i], sm.PollDue{Invocation: o1m.ID, Attempt: 1, Nonce: nonce},
			check(o1m.ID, 1), pollLater(o1m.ID, 1, nonce+1, due[i+1]))
	}
}

func TestPoll_StaleEarlyAndLatePollsAreHarmless(t *testing.T) {
	t.Parallel()
	f := runningFixture(t, sm.Policy{})
	f.stale(at(2*minute+2*sec), sm.PollDue{Invocation: o1m.ID, Attempt: 1, Nonce: 3})
	f.stale(at(2*minute+2*sec), sm.PollDue{Invocation: o1m.ID, Attempt: 2, Nonce: 4})
	f.stale(at(2*minute+2*sec), sm.PollDue{Invocation: o2m.ID, Attempt: 1, Nonce: 4})
	f.stale(at(2*minute+2*sec), sm.PollDue{Invocation: o1m.ID, Attempt: 1})
	// Early: the queue's clock runs ahead of ours; it waits for its time
	// without asking the target.
	f.step(at(2*minute), sm.PollDue{Invocation: o1m.ID, Attempt: 1, Nonce: 4},
		pollLater(o1m.ID, 1, 5, at(2*minute+2*sec)))
	f.stale(at(2*minute+2*sec), sm.PollDue{Invocation: o1m.ID, Attempt: 1, Nonce: 4})
	f.step(at(2*minute+2*sec), sm.PollDue{Invocation: o1m.ID, Attempt: 1, Nonce: 5},
		check(o1m.ID, 1), pollLater(o1m.ID, 1, 6, at(3*minute+3*sec)))
	f.step(at(2*minute+5*sec), sm.Ended{Invocation: o1m.ID, Attempt: 1, Succeeded: true, Message: "COMPLETED"},
		record(o1m, 1, sm.StatusSucceeded, "COMPLETED"))
	// After the end, the poll already scheduled is stale.
	f.stale(at(3*minute+3*sec), sm.PollDue{Invocation: o1m.ID, Attempt: 1, Nonce: 6})
}

func TestPoll_AnEndReportedByPushAndByPollIsRecordedOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		second sm.Event
	}{
		{"push, then the poll's answer", sm.Ended{Invocation: o1m.ID, Attempt: 1, Succeeded: true, Message: "by poll"}},
		{"push, then the same push again", sm.Ended{Invocation: o1m.ID, Attempt: 1, Succeeded: false, Message: "by push"}},
		{"push, then a poll task", sm.PollDue{Invocation: o1m.ID, Attempt: 1, Nonce: 4}},
		{"push, then the watchdog past the hard timeout", sm.WatchdogExpired{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := runningFixture(t, sm.Policy{MaxAttempts: 3})
			f.step(at(1*minute+30*sec), sm.Ended{Invocation: o1m.ID, Attempt: 1, Succeeded: true, Message: "by push"},
				record(o1m, 1, sm.StatusSucceeded, "by push"))
			f.stale(at(12*minute), tc.second)
		})
	}
}

func TestPoll_ALostPollIsReissuedByTheWatchdog(t *testing.T) {
	t.Parallel()
	f := runningFixture(t, sm.Policy{})
	if got, want := f.job().WatchdogTimerTs, at(2*minute+32*sec); !got.Equal(want) {
		t.Fatalf("WatchdogTimerTs = %s, want the poll's time plus TaskGrace, %s", off(got), off(want))
	}
	f.stale(at(2*minute+31*sec), sm.WatchdogExpired{})
	f.step(at(2*minute+32*sec), sm.WatchdogExpired{}, pollLater(o1m.ID, 1, 5, at(2*minute+32*sec)))
	f.stale(at(2*minute+32*sec), sm.PollDue{Invocation: o1m.ID, Attempt: 1, Nonce: 4})
	f.step(at(2*minute+33*sec), sm.PollDue{Invocation: o1m.ID, Attempt: 1, Nonce: 5},
		check(o1m.ID, 1), pollLater(o1m.ID, 1, 6, at(4*minute+5*sec)))
}

func TestPoll_ASilentAttemptStillFailsAtItsHardTimeout(t *testing.T) {
	t.Parallel()
	f := runningFixture(t, sm.Policy{})
	due := []time.Time{at(2*minute + 2*sec), at(3*minute + 3*sec), at(5*minute + 5*sec), at(9*minute + 9*sec), at(17*minute + 17*sec)}
	for i := range len(due) - 1 {
		nonce := int64(4 + i)
		f.step(due[i], sm.PollDue{Invocation: o1m.ID, Attempt: 1, Nonce: nonce},
			check(o1m.ID, 1), pollLater(o1m.ID, 1, nonce+1, due[i+1]))
	}
	// The launch at 1m1s plus the 10m default timeout and 30s kill grace.
	f.step(at(11*minute+31*sec), sm.WatchdogExpired{},
		abortTarget(o1m.ID, 1),
		record(o1m, 1, sm.StatusFailed, "timed out: no outcome 10m30s after the launch"))
	f.stale(due[len(due)-1], sm.PollDue{Invocation: o1m.ID, Attempt: 1, Nonce: 7})
}

func TestPoll_NoPollsWhenMinPollIsZero(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "* * * * *", sm.Policy{})
	f.step(t0, sm.Defined{}, tickLater(at(1*minute), 1))
	f.step(at(1*minute), sm.Tick{Nonce: 1},
		record(o1m, 1, sm.StatusQueued, ""), start(o1m.ID, 1, 2, at(1*minute)), tickLater(at(2*minute), 3))
	f.step(at(1*minute+1*sec), sm.Starting{Invocation: o1m.ID, Attempt: 1, Nonce: 2},
		record(o1m, 1, sm.StatusLaunching, ""), launch(o1m.ID, 1))
	f.step(at(1*minute+2*sec), sm.Launched{Invocation: o1m.ID, Attempt: 1}, record(o1m, 1, sm.StatusRunning, ""))
}

func TestLaunchedRecordsWhatTheTargetSaidOfIt(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "* * * * *", sm.Policy{})
	f.step(t0, sm.Defined{}, tickLater(at(1*minute), 1))
	f.step(at(1*minute), sm.Tick{Nonce: 1},
		record(o1m, 1, sm.StatusQueued, ""), start(o1m.ID, 1, 2, at(1*minute)), tickLater(at(2*minute), 3))
	f.step(at(1*minute+1*sec), sm.Starting{Invocation: o1m.ID, Attempt: 1, Nonce: 2},
		record(o1m, 1, sm.StatusLaunching, ""), launch(o1m.ID, 1))
	f.step(at(1*minute+2*sec), sm.Launched{Invocation: o1m.ID, Attempt: 1, Message: "Swarming task 6a0010 on https://s.example.com"},
		record(o1m, 1, sm.StatusRunning, "Swarming task 6a0010 on https://s.example.com"))
	// Said again by a poll that finds it running, it records nothing.
	f.stale(at(1*minute+3*sec), sm.Launched{Invocation: o1m.ID, Attempt: 1, Message: "Swarming task 6a0010 on https://s.example.com is RUNNING"})
}

// Random sequences with polls on: polls delivered on time, early, late and
// again, their Checks answered by ends that pushes report too. The sim
// checks every invariant after every step: a poll or Check only of a
// RUNNING attempt, and no record after an attempt's end.
func TestPoll_RandomSequences(t *testing.T) {
	t.Parallel()
	cases := 1000
	if testing.Short() {
		cases = 100
	}
	for c := range cases {
		seed := 0x9011 + uint64(c)
		rng := newRand(seed)
		s := newSim(t, seed, propSchedules[rng.IntN(len(propSchedules))], randomPolicy(rng))
		s.m.Config = pollCfg
		s.step(sm.Defined{}, false)
		for range 200 {
			s.randomStep()
		}
		s.finish()
	}
}

// A failed attempt's polls go with it: its retry waits for its own start,
// and the watchdog timer is that start's, not the dead attempt's poll.
// Before, the retry kept the poll nonce, and the timer stayed at a poll
// nothing expected any more: a job the watchdog saw stuck.
func TestPoll_ARetryDropsTheFailedAttemptsPolls(t *testing.T) {
	t.Parallel()
	f := runningFixture(t, sm.Policy{MaxAttempts: 2, MinBackoff: minute})
	f.step(at(1*minute+30*sec), sm.Ended{Invocation: o1m.ID, Attempt: 1, Message: "exit 1"},
		record(o1m, 2, sm.StatusRetrying, "attempt 1 failed: exit 1; attempt 2 in 1m0s"),
		start(o1m.ID, 2, 5, at(2*minute+30*sec)))
	if inv := f.job().Active[0]; inv.PollNonce != 0 || !inv.PollAt.IsZero() {
		t.Errorf("the retry kept the failed attempt's poll: nonce %d at %s", inv.PollNonce, off(inv.PollAt))
	}
	if got, want := f.job().WatchdogTimerTs, at(3*minute); !got.Equal(want) {
		t.Errorf("WatchdogTimerTs = %s; want the retry's start plus TaskGrace, %s", off(got), off(want))
	}
	f.stale(at(2*minute+2*sec), sm.PollDue{Invocation: o1m.ID, Attempt: 1, Nonce: 4})
	f.stale(at(2*minute+2*sec), sm.PollDue{Invocation: o1m.ID, Attempt: 2, Nonce: 4})
}
