package statemachine_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	sm "github.com/sundial-cron/sundial/statemachine"
)

// snapshot is a job state reached by a real run, with what the machine ran
// it under.
type snapshot struct {
	expr   string
	policy sm.Policy
	now    time.Time
	job    sm.JobState
}

// walkSnapshots collects, for every schedule of the property test and a
// few policies, up to perState distinct job states of each state reached
// by random runs: queued, backing-off, launching and running invocations,
// pending occurrences, ticks and hops, in every state.
func walkSnapshots(t *testing.T, perState int) []snapshot {
	policies := []sm.Policy{
		{},
		{Overlap: sm.OverlapQueueOne, MaxAttempts: 3, MinBackoff: 10 * sec, MaxBackoff: 1 * minute, CatchupWindow: 5 * minute},
		{Overlap: sm.OverlapAllow, MaxConcurrent: 2, Idempotent: true, AutoDisableAfter: 2, Jitter: 30 * sec},
		{Overlap: sm.OverlapReplace, MaxAttempts: 2, Timeout: 2 * minute},
	}
	var out []snapshot
	for _, expr := range propSchedules {
		count := map[sm.State]int{}
		seen := map[string]bool{}
		for pi, p := range policies {
			for seed := range uint64(20) {
				s := newSim(t, seed*31+uint64(pi), expr, p)
				s.step(sm.Defined{}, false)
				for range 150 {
					s.randomStep()
					j := s.m.Job
					key := fmt.Sprintf("%d %s", pi, formatJob(j))
					if count[j.State] >= perState || seen[key] {
						continue
					}
					seen[key] = true
					count[j.State]++
					out = append(out, snapshot{expr: expr, policy: p, now: s.m.Now, job: j.Clone()})
				}
			}
		}
		for _, st := range sm.States {
			if expr != "triggered" && count[st] == 0 {
				t.Fatalf("schedule %q: the random runs never reached %s", expr, st)
			}
		}
	}
	return out
}

// variant is one event to deliver to a snapshot. stale says it does not
// match what the job expects: it must change nothing and emit nothing.
type variant struct {
	name  string
	event sm.Event
	stale bool
}

// variants lists every event type for job j, with a matching and a stale
// variant for those that carry a nonce or an invocation.
func variants(j sm.JobState) []variant {
	vs := []variant{
		{"Defined", sm.Defined{}, false},
		{"Removed", sm.Removed{Reason: removedFromConfig}, false},
		{"Tick/stale", sm.Tick{Nonce: j.TickNonce + 1000}, true},
		{"Tick/zero", sm.Tick{}, true},
		{"Triggered", sm.Triggered{}, false},
		{"PauseRequested", sm.PauseRequested{Note: "admin"}, false},
		{"ResumeRequested", sm.ResumeRequested{}, false},
		{"AbortRequested/all", sm.AbortRequested{}, false},
		{"AbortRequested/unknown", sm.AbortRequested{Invocation: "no-such"}, false},
		{"WatchdogExpired", sm.WatchdogExpired{}, false},
		{"Starting/unknown", sm.Starting{Invocation: "no-such", Attempt: 1, Nonce: 1}, true},
		{"Launched/unknown", sm.Launched{Invocation: "no-such", Attempt: 1}, true},
		{"Ended/unknown", sm.Ended{Invocation: "no-such", Attempt: 1, Succeeded: true}, true},
		{"NotLaunched/unknown", sm.NotLaunched{Invocation: "no-such", Attempt: 1}, true},
		{"OutcomeUnknown/unknown", sm.OutcomeUnknown{Invocation: "no-such", Attempt: 1}, true},
	}
	if j.TickNonce != 0 {
		vs = append(vs, variant{"Tick/matching", sm.Tick{Nonce: j.TickNonce}, false},
			variant{"Tick/matching, starting", sm.Tick{Nonce: j.TickNonce, Start: true}, false})
	}
	for _, inv := range j.Active {
		id, a := inv.ID, inv.Attempt
		vs = append(vs,
			variant{"AbortRequested/matching", sm.AbortRequested{Invocation: id}, false},
			variant{"Starting/matching", sm.Starting{Invocation: id, Attempt: a, Nonce: inv.Nonce}, false},
			variant{"Tick/the attempt's start nonce", sm.Tick{Nonce: inv.Nonce}, false},
			variant{"Starting/stale nonce", sm.Starting{Invocation: id, Attempt: a, Nonce: inv.Nonce + 1000}, true},
			variant{"Starting/stale attempt", sm.Starting{Invocation: id, Attempt: a + 1, Nonce: inv.Nonce}, true},
			variant{"Launched/matching", sm.Launched{Invocation: id, Attempt: a}, false},
			variant{"Launched/stale attempt", sm.Launched{Invocation: id, Attempt: a + 1}, true},
			variant{"Ended/matching success", sm.Ended{Invocation: id, Attempt: a, Succeeded: true}, false},
			variant{"Ended/matching failure", sm.Ended{Invocation: id, Attempt: a, Message: "exit 1"}, false},
			variant{"Ended/stale attempt", sm.Ended{Invocation: id, Attempt: a + 1, Succeeded: true}, true},
			variant{"NotLaunched/matching", sm.NotLaunched{Invocation: id, Attempt: a}, false},
			variant{"NotLaunched/stale attempt", sm.NotLaunched{Invocation: id, Attempt: a + 1}, true},
			variant{"OutcomeUnknown/matching", sm.OutcomeUnknown{Invocation: id, Attempt: a}, false},
			variant{"OutcomeUnknown/stale attempt", sm.OutcomeUnknown{Invocation: id, Attempt: a + 1}, true},
		)
		if a > 1 {
			vs = append(vs, variant{"Ended/earlier attempt", sm.Ended{Invocation: id, Attempt: a - 1, Succeeded: true}, true})
		}
	}
	return vs
}

// wantErr says which steps the machine turns down, and with what: a
// trigger or a pause of a DISABLED job, and an abort of an invocation that
// is not unfinished, are refused (ErrRefused); a StartInvocation delivered
// again within LaunchGrace of its launch is ErrLaunchInProgress. Nothing
// else is ever an error.
func wantErr(m *sm.Machine, e sm.Event) error {
	j := m.Job
	switch e := e.(type) {
	case sm.Triggered, sm.PauseRequested:
		if j.State == sm.Disabled {
			return sm.ErrRefused
		}
	case sm.AbortRequested:
		if e.Invocation != "" && !slices.ContainsFunc(j.Active, func(inv sm.Invocation) bool { return inv.ID == e.Invocation }) {
			return sm.ErrRefused
		}
	case sm.Starting:
		for _, inv := range j.Active {
			if inv.ID == e.Invocation && inv.Attempt == e.Attempt && inv.Nonce == e.Nonce &&
				inv.Status == sm.StatusLaunching && m.Now.Before(inv.Since.Add(m.Config.LaunchGrace)) {
				return sm.ErrLaunchInProgress
			}
		}
	case sm.Tick:
		// The tick that launched an attempt itself is that attempt's
		// StartInvocation.
		for _, inv := range j.Active {
			if e.Nonce != 0 && inv.Nonce == e.Nonce &&
				inv.Status == sm.StatusLaunching && m.Now.Before(inv.Since.Add(m.Config.LaunchGrace)) {
				return sm.ErrLaunchInProgress
			}
		}
	}
	return nil
}

// TestEveryStateAndEvent walks every (state, event) pair: States × every
// event type, matching and stale, delivered to job states reached by real
// runs, at the time they were reached, a little later, when their watchdog
// timer passes, and 40 days later. After each step: no panic, the state is
// one of States, a step turned down (exactly the ones wantErr names, with
// its error) leaves Job and Actions unchanged, a stale event changes nothing, the
// watchdog rule holds, and no Launch comes without a Record LAUNCHING of
// the same attempt before it in the same step.
func TestEveryStateAndEvent(t *testing.T) {
	t.Parallel()
	type pair struct {
		st      sm.State
		variant string
	}
	covered := map[pair]bool{}
	errs := map[error]int{}
	snaps := walkSnapshots(t, 12)
	rng := rand.New(rand.NewPCG(7, 7))
	for _, sn := range snaps {
		times := []time.Time{sn.now, sn.now.Add(time.Duration(rng.IntN(20)) * sec), sn.now.Add(time.Duration(rng.IntN(600)) * sec), sn.now.Add(40 * day)}
		if !sn.job.WatchdogTimerTs.IsZero() {
			times = append(times, laterOf(sn.now, sn.job.WatchdogTimerTs))
		}
		for _, now := range times {
			for _, v := range variants(sn.job) {
				covered[pair{sn.job.State, v.name}] = true
				if err := walkStep(t, sn, now, v); errors.Is(err, sm.ErrRefused) {
					errs[sm.ErrRefused]++
				} else if errors.Is(err, sm.ErrLaunchInProgress) {
					errs[sm.ErrLaunchInProgress]++
				}
			}
		}
	}
	// Every event type met every state, with a matching and a stale
	// variant where one exists: a Tick can match only a job that expects
	// one, and an invocation event only a job that has one.
	for _, st := range sm.States {
		for _, name := range []string{
			"Defined", "Removed", "Tick/stale", "Triggered", "PauseRequested", "ResumeRequested",
			"AbortRequested/all", "AbortRequested/unknown", "WatchdogExpired",
			"Starting/unknown", "Launched/unknown", "Ended/unknown", "NotLaunched/unknown", "OutcomeUnknown/unknown",
			"AbortRequested/matching", "Starting/matching", "Starting/stale nonce", "Launched/matching", "Launched/stale attempt",
			"Ended/matching success", "Ended/matching failure", "Ended/stale attempt",
			"NotLaunched/matching", "NotLaunched/stale attempt", "OutcomeUnknown/matching", "OutcomeUnknown/stale attempt",
		} {
			if st == sm.Scheduled && slices.Contains([]string{"AbortRequested/matching", "Starting/matching", "Starting/stale nonce",
				"Launched/matching", "Launched/stale attempt", "Ended/matching success", "Ended/matching failure", "Ended/stale attempt",
				"NotLaunched/matching", "NotLaunched/stale attempt", "OutcomeUnknown/matching", "OutcomeUnknown/stale attempt"}, name) {
				continue // a SCHEDULED job has no unfinished invocation
			}
			if !covered[pair{st, name}] {
				t.Errorf("the walk never delivered %s to a %s job", name, st)
			}
		}
	}
	for _, err := range []error{sm.ErrRefused, sm.ErrLaunchInProgress} {
		if errs[err] == 0 {
			t.Errorf("the walk never met %v", err)
		}
	}
	for _, st := range []sm.State{sm.Scheduled, sm.Queued, sm.Running} {
		if !covered[pair{st, "Tick/matching"}] {
			t.Errorf("the walk never delivered a matching Tick to a %s job", st)
		}
	}
}

func walkStep(t *testing.T, sn snapshot, now time.Time, v variant) error {
	t.Helper()
	var nonce int64 = 1 << 40 // above any nonce the snapshot holds
	m := &sm.Machine{
		JobID: testJobID, Now: now, Schedule: mustParse(t, sn.expr), Policy: sn.policy, Config: cfg,
		NewNonce: func() int64 { nonce++; return nonce },
		Job:      sn.job.Clone(),
		// A host may step with actions of an earlier step not cleared; a
		// refused step must leave them too.
		Actions: []sm.Action{tickLater(t0, 1)},
	}
	before, actionsBefore := m.Job.Clone(), slices.Clone(m.Actions)
	want := wantErr(m, v.event)
	where := fmt.Sprintf("schedule %q, policy %+v, at %s, %s to %s", sn.expr, sn.policy, off(now), v.name, formatJob(sn.job))
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return m.Step(v.event)
	}()
	if (err == nil) != (want == nil) || want != nil && !errors.Is(err, want) {
		t.Fatalf("%s: error %v, want %v", where, err, want)
	}
	if err != nil {
		if !sameJob(m.Job, before) || !slices.Equal(m.Actions, actionsBefore) {
			t.Fatalf("%s: %v, yet the job or the actions changed\n got %s\nactions:\n%s", where, err, formatJob(m.Job), formatActions(m.Actions))
		}
		return err
	}
	m.Actions = m.Actions[len(actionsBefore):]
	if v.stale && (len(m.Actions) != 0 || !sameJob(m.Job, before)) {
		t.Fatalf("%s: a stale event changed something\n got %s\nactions:\n%s", where, formatJob(m.Job), formatActions(m.Actions))
	}
	if err := checkStep(where, m, before); err != nil {
		t.Fatal(err)
	}
	return nil
}

// TestATickAwaitedAloneIsSteppedByNoOtherTask pins what AwaitsOnlyTick
// promises a host that takes a tick ahead of its time: on every job state
// of the walk that awaits only its tick, every task but that tick (a
// stale tick, a start, a poll's or a target's answer of any invocation,
// the watchdog before the tick is overdue; requests and the tick itself
// aside) changes nothing and emits
// nothing. Only requests can come between.
func TestATickAwaitedAloneIsSteppedByNoOtherTask(t *testing.T) {
	t.Parallel()
	requests := []string{"Defined", "Removed", "Triggered", "PauseRequested", "ResumeRequested", "AbortRequested/", "Tick/matching"}
	isTask := func(name string) bool {
		return !slices.ContainsFunc(requests, func(r string) bool { return strings.HasPrefix(name, r) })
	}
	awaiting := 0
	for _, sn := range walkSnapshots(t, 12) {
		if !sn.job.AwaitsOnlyTick(sn.job.TickNonce) {
			continue
		}
		awaiting++
		// Any time up to the tick's own: a tick taken ahead is stepped
		// before it.
		for _, now := range []time.Time{sn.now, sn.job.TickAt.Add(-time.Second), sn.job.TickAt} {
			if now.Before(sn.now) || now.After(sn.job.TickAt) {
				continue // the tick is not ahead, or overdue
			}
			for _, v := range variants(sn.job) {
				if !isTask(v.name) {
					continue
				}
				m := &sm.Machine{
					JobID: testJobID, Now: now, Schedule: mustParse(t, sn.expr), Policy: sn.policy, Config: cfg,
					NewNonce: func() int64 { return 1 << 40 }, Job: sn.job.Clone(),
				}
				if err := m.Step(v.event); err != nil || len(m.Actions) != 0 || !sameJob(m.Job, sn.job) {
					t.Fatalf("schedule %q, at %s, %s to %s: error %v, actions\n%s\njob now %s; want nothing changed",
						sn.expr, off(now), v.name, formatJob(sn.job), err, formatActions(m.Actions), formatJob(m.Job))
				}
			}
		}
	}
	if awaiting == 0 {
		t.Fatal("the walk reached no job awaiting only its tick")
	}
}

func TestAwaitsOnlyTick(t *testing.T) {
	t.Parallel()
	idle := sm.JobState{State: sm.Scheduled, TickNonce: 7, TickAt: at(minute), NextAt: at(minute)}
	inv := sm.Invocation{Occurrence: sm.Occurrence{ID: "o", At: t0}, Attempt: 1, Status: sm.StatusRunning}
	for _, c := range []struct {
		name  string
		job   func(*sm.JobState)
		nonce int64
		want  bool
	}{
		{"scheduled, ticking for it", func(*sm.JobState) {}, 7, true},
		{"another tick's nonce", func(*sm.JobState) {}, 8, false},
		{"no tick expected", func(j *sm.JobState) { j.TickNonce = 0 }, 0, false},
		{"paused", func(j *sm.JobState) { j.State = sm.Paused }, 7, false},
		{"an invocation unfinished", func(j *sm.JobState) { j.State, j.Active = sm.Running, []sm.Invocation{inv} }, 7, false},
		{"an occurrence pending", func(j *sm.JobState) { j.Pending = &sm.Occurrence{ID: "p", At: t0} }, 7, false},
		{"a backfill under way", func(j *sm.JobState) { j.Backfill = &sm.Backfill{From: t0, To: at(hour)} }, 7, false},
	} {
		j := idle.Clone()
		c.job(&j)
		if got := j.AwaitsOnlyTick(c.nonce); got != c.want {
			t.Errorf("%s: AwaitsOnlyTick(%d) = %v, want %v", c.name, c.nonce, got, c.want)
		}
	}
}
