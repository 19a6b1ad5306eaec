package statemachine_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/schedule"
	sm "github.com/sundial-cron/sundial/statemachine"
)

// sim is a host for one job that delivers random events the way a real
// host can: tasks at or after their ETA, late, twice, or long after they
// went stale; target outcomes for launches old and new; admin requests;
// watchdog passes; time jumps. It checks the per-step invariants after
// every step and keeps what the end-of-run oracle needs.
type sim struct {
	t     testing.TB
	rng   *rand.Rand
	m     *sm.Machine
	sched *schedule.Schedule
	expr  string
	nonce int64
	log   []string // one line a step, printed on failure

	// Everything the machine ever asked for, for late and repeated
	// deliveries.
	ticks    []sm.TickLater
	starts   []sm.StartInvocation
	launches []sm.Launch
	polls    []sm.PollLater

	// What the oracle checks at the end.
	launched  map[attemptKey]int // Launch actions per attempt
	queued    map[string]int     // Record QUEUED per invocation id
	last      map[string]sm.Status
	skips     []sm.RecordSkipped
	triggers  int       // Triggered steps that were not refused
	windows   []window  // the periods the job was enabled in
	openSince time.Time // start of the open window; zero when disabled

	// pauseUntil: pauses may end by themselves (PauseRequested.Until).
	pauseUntil bool
	// capped are the periods the job had reached its cap (Policy.MaxRuns)
	// in: it has no occurrences then, though a pause that drops the one
	// pending may uncap it and account for them after all.
	capped      []window
	cappedSince time.Time
	runs        int64 // scheduled occurrences QUEUED
}

type attemptKey struct {
	id      string
	attempt int
}

// window is (From, To]: the occurrences the job had while enabled.
type window struct {
	From, To time.Time
	Why      string
}

func newSim(t testing.TB, seed uint64, expr string, p sm.Policy) *sim {
	return newSimOf(t, seed, expr, mustParse(t, expr), p)
}

// newSimOf is newSim of a schedule parsed with options of its own.
func newSimOf(t testing.TB, seed uint64, expr string, sched *schedule.Schedule, p sm.Policy) *sim {
	s := &sim{
		t:        t,
		rng:      rand.New(rand.NewPCG(seed, seed^0x5d1a1)),
		sched:    sched,
		expr:     expr,
		launched: map[attemptKey]int{},
		queued:   map[string]int{},
		last:     map[string]sm.Status{},
	}
	s.m = &sm.Machine{
		JobID:    testJobID,
		Now:      t0,
		Schedule: s.sched,
		Policy:   p,
		Config:   cfg,
		NewNonce: func() int64 { s.nonce++; return s.nonce },
	}
	return s
}

func (s *sim) fatalf(format string, args ...any) {
	s.t.Helper()
	tail := s.log
	if n := *propTail; len(tail) > n {
		tail = append([]string{tail[0], "..."}, tail[len(tail)-n:]...)
	}
	s.t.Fatalf("%s\npolicy %+v, schedule %q\nlast steps:\n%s\njob %s", fmt.Sprintf(format, args...), s.m.Policy, s.expr, strings.Join(tail, "\n"), formatJob(s.m.Job))
}

// advance moves the clock forward by d; time never goes back.
func (s *sim) advance(d time.Duration) {
	if d > 0 {
		s.m.Now = s.m.Now.Add(d)
	}
}

// advanceTo moves the clock to t if t is later.
func (s *sim) advanceTo(t time.Time) {
	if t.After(s.m.Now) {
		s.m.Now = t
	}
}

// step delivers e now and checks the per-step invariants. stale says the
// host knows the event is stale, so it must change nothing at all.
func (s *sim) step(e sm.Event, stale bool) error {
	s.t.Helper()
	m := s.m
	before, nonce := m.Job.Clone(), s.nonce
	want := wantErr(m, e)
	err := m.Step(e)
	where := fmt.Sprintf("#%d at %s: %s", len(s.log), off(m.Now), describe(e))
	s.log = append(s.log, where+"\n"+formatActions(m.Actions))
	if (err == nil) != (want == nil) || want != nil && !errors.Is(err, want) {
		s.fatalf("%s: error %v, want %v", where, err, want)
	}
	if err != nil {
		if !sameJob(m.Job, before) || len(m.Actions) != 0 || s.nonce != nonce {
			s.fatalf("%s: %v, yet it changed the job or emitted actions:\n%s", where, err, formatActions(m.Actions))
		}
		return err
	}
	if stale && (len(m.Actions) != 0 || !sameJob(m.Job, before)) {
		s.fatalf("%s: a stale delivery changed something (invariant 6)\nbefore %s\nactions:\n%s", where, formatJob(before), formatActions(m.Actions))
	}
	if err := checkStep(where, m, before); err != nil {
		s.fatalf("%v", err)
	}
	s.absorb(where, before, e)
	m.Actions = nil
	return nil
}

// checkStep checks what holds after every step, whatever the event.
func checkStep(where string, m *sm.Machine, before sm.JobState) error {
	j := m.Job
	if !slices.Contains(sm.States, j.State) {
		return fmt.Errorf("%s: state %q is not one of States", where, j.State)
	}
	if err := watchdogErr(m); err != nil {
		return fmt.Errorf("%s: %v", where, err)
	}
	if err := writeBeforeCallErr(m.Actions); err != nil {
		return fmt.Errorf("%s: %v", where, err)
	}
	ids := map[string]bool{}
	for _, inv := range j.Active {
		if ids[inv.ID] {
			return fmt.Errorf("%s: Active holds %s twice: %s", where, inv.ID, formatJob(j))
		}
		ids[inv.ID] = true
	}
	if j.Pending != nil && ids[j.Pending.ID] {
		return fmt.Errorf("%s: %s is both pending and active", where, j.Pending.ID)
	}
	if j.Pending != nil && len(j.Active) == 0 {
		return fmt.Errorf("%s: %s is pending with no invocation in the way", where, j.Pending.ID)
	}
	if (j.State == sm.Disabled || j.State == sm.Paused && j.PausedUntil.IsZero()) && j.TickNonce != 0 {
		return fmt.Errorf("%s: a %s job expects a tick", where, j.State)
	}
	if j.State != sm.Paused && !j.PausedUntil.IsZero() {
		return fmt.Errorf("%s: a %s job is paused until %s", where, j.State, off(j.PausedUntil))
	}
	for _, a := range m.Actions {
		l, ok := a.(sm.Launch)
		if !ok {
			continue
		}
		for _, inv := range before.Active {
			if inv.ID == l.Invocation && inv.Status == sm.StatusRetrying && m.Now.Before(inv.RetryAt) {
				return fmt.Errorf("%s: attempt %d launched before its backoff ends at %s", where, l.Attempt, off(inv.RetryAt))
			}
		}
	}
	if j.Cursor.Before(before.Cursor) {
		return fmt.Errorf("%s: the cursor went back from %s to %s", where, off(before.Cursor), off(j.Cursor))
	}
	// An interval job plans its next tick one interval after the later of
	// the last occurrence and the last end, and only when none runs.
	if iv := m.Schedule.Interval(); iv > 0 && !j.NextAt.IsZero() && !j.NextAt.Equal(before.NextAt) {
		if len(j.Active) > 0 {
			return fmt.Errorf("%s: an interval job planned its next tick while an invocation has not ended", where)
		}
		if want := laterOf(j.Cursor, j.LastEnded).Add(iv); !j.NextAt.Equal(want) {
			return fmt.Errorf("%s: interval tick for %s, want one interval after max(cursor, last end) = %s", where, off(j.NextAt), off(want))
		}
	}
	for _, a := range m.Actions {
		switch a := a.(type) {
		case sm.TickLater:
			if j.TickNonce != 0 && a.Nonce != j.TickNonce && !laterAction(m.Actions, a) {
				return fmt.Errorf("%s: TickLater nonce %d is not the job's tick nonce %d", where, a.Nonce, j.TickNonce)
			}
			if a.At.After(m.Now.Add(m.Config.MaxTickDelay)) {
				return fmt.Errorf("%s: TickLater at %s is further than MaxTickDelay", where, off(a.At))
			}
		case sm.RecordSkipped:
			if a.Count < 1 || a.Last.Before(a.First) {
				return fmt.Errorf("%s: malformed %+v", where, a)
			}
		}
	}
	return nil
}

// laterAction reports whether another TickLater follows a in as (so a was
// superseded within the step).
func laterAction(as []sm.Action, a sm.TickLater) bool {
	seen := false
	for _, b := range as {
		if b == sm.Action(a) {
			seen = true
			continue
		}
		if _, ok := b.(sm.TickLater); ok && seen {
			return true
		}
	}
	return false
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// absorb records a successful step's actions for later deliveries and for
// the oracle.
func (s *sim) absorb(where string, before sm.JobState, e sm.Event) {
	m := s.m
	for _, a := range m.Actions {
		switch a := a.(type) {
		case sm.TickLater:
			s.ticks = append(s.ticks, a)
		case sm.StartInvocation:
			s.starts = append(s.starts, a)
		case sm.PollLater:
			if !s.running(a.Invocation, a.Attempt) {
				s.fatalf("%s: a poll of %s#%d, which is not RUNNING", where, a.Invocation, a.Attempt)
			}
			s.polls = append(s.polls, a)
		case sm.Check:
			if !s.running(a.Invocation, a.Attempt) {
				s.fatalf("%s: a Check of %s#%d, which is not RUNNING", where, a.Invocation, a.Attempt)
			}
		case sm.Launch:
			k := attemptKey{a.Invocation, a.Attempt}
			if s.launched[k] > 0 && !relaunchAllowed(e, k) {
				s.fatalf("%s: a second Launch of %s#%d (invariant 1)", where, k.id, k.attempt)
			}
			s.launched[k]++
			s.launches = append(s.launches, a)
		case sm.Record:
			if a.Status == sm.StatusQueued {
				s.queued[a.ID]++
				if s.queued[a.ID] > 1 {
					s.fatalf("%s: a second Record QUEUED of %s: two invocations of one occurrence", where, a.ID)
				}
				if !a.Manual && !a.Backfill {
					s.runs++
					if max := m.Policy.MaxRuns; max > 0 && s.runs > max {
						s.fatalf("%s: scheduled run %d of %s, past the cap of %d", where, s.runs, a.ID, max)
					}
				}
			} else if s.queued[a.ID] == 0 {
				s.fatalf("%s: Record %s of %s, which was never QUEUED", where, a.Status, a.ID)
			}
			if s.last[a.ID].Ended() {
				s.fatalf("%s: Record %s of %s after it ended %s", where, a.Status, a.ID, s.last[a.ID])
			}
			s.last[a.ID] = a.Status
		case sm.RecordSkipped:
			s.skips = append(s.skips, a)
		}
	}
	if _, ok := e.(sm.Triggered); ok {
		s.triggers++
	}
	// A DISABLED job starts nothing new: no occurrence is queued, no
	// attempt is waiting to start; the only Launch is the repeat of one that was
	// launching when it was disabled.
	if m.Job.State == sm.Disabled {
		for _, a := range m.Actions {
			switch a := a.(type) {
			case sm.StartInvocation:
				// One re-issued earlier in a step that then disabled the
				// job is stale already: the invocation was aborted.
				if s.current(a.Invocation, a.Attempt, a.Nonce) {
					s.fatalf("%s: the job is DISABLED, yet it schedules %s#%d", where, a.Invocation, a.Attempt)
				}
			case sm.Record:
				if a.Status == sm.StatusQueued {
					s.fatalf("%s: the job is DISABLED, yet it queues %s", where, a.ID)
				}
			}
		}
	}
	// A paused job whose pause ends by itself ticks for that end.
	if j := m.Job; j.State == sm.Paused && !j.PausedUntil.IsZero() && j.TickNonce == 0 {
		s.fatalf("%s: paused until %s, but no tick is due for it", where, off(j.PausedUntil))
	}
	if p := m.Policy; p.MaxRuns > 0 {
		n := m.Job.Runs
		if pd := m.Job.Pending; pd != nil && !pd.Manual && !pd.Backfill {
			n++
		}
		switch isCapped := n >= p.MaxRuns; {
		case isCapped && s.cappedSince.IsZero():
			s.cappedSince = m.Now
		case !isCapped && !s.cappedSince.IsZero():
			s.capped = append(s.capped, window{From: s.cappedSince, To: m.Now, Why: "capped"})
			s.cappedSince = time.Time{}
		}
	}
	// The job's enabled windows, for the occurrence oracle.
	wasOn := before.State != "" && before.State != sm.Disabled
	isOn := m.Job.State != sm.Disabled
	switch {
	case !wasOn && isOn:
		s.openSince = m.Now
	case wasOn && !isOn:
		s.windows = append(s.windows, window{From: s.openSince, To: m.Now, Why: "enabled"})
		s.openSince = time.Time{}
	}
}

// relaunchAllowed reports whether e may launch attempt k a second time:
// only when the target said it never saw it. An unknown outcome, even of an
// idempotent target, is retried as the next attempt.
func relaunchAllowed(e sm.Event, k attemptKey) bool {
	n, ok := e.(sm.NotLaunched)
	return ok && n.Invocation == k.id && n.Attempt == k.attempt
}

// removeOrRedefine applies Removed or Defined the way a host must: a
// redefinition is Redefining (under the old definition) and then Defined.
// Neither may drop an occurrence: what fell due is run or recorded, which
// the oracle checks like everything else.
func (s *sim) removeOrRedefine(e sm.Event) {
	if _, redefine := e.(sm.Defined); redefine {
		s.step(sm.Redefining{}, false)
	}
	s.step(e, false)
}

// randomPolicy draws a policy from the values that make a difference.
func randomPolicy(rng *rand.Rand) sm.Policy {
	pick := func(ds ...time.Duration) time.Duration { return ds[rng.IntN(len(ds))] }
	overlaps := []sm.Overlap{"", sm.OverlapSkip, sm.OverlapQueueOne, sm.OverlapAllow, sm.OverlapReplace}
	return sm.Policy{
		Overlap:          overlaps[rng.IntN(len(overlaps))],
		MaxConcurrent:    rng.IntN(4),
		CatchupWindow:    pick(0, 0, 2*minute, 5*minute, 1*hour),
		Timeout:          pick(0, 2*minute, 30*minute),
		MaxAttempts:      rng.IntN(4),
		MinBackoff:       pick(0, 10*sec, 1*minute),
		MaxBackoff:       pick(0, 30*sec, 5*minute),
		AutoDisableAfter: []int{0, 0, 2, 3}[rng.IntN(4)],
		Jitter:           pick(0, 0, 0, 30*sec, 3*minute),
		Idempotent:       rng.IntN(2) == 0,
	}
}

// randomStep makes one random thing happen.
func (s *sim) randomStep() {
	// Drawn only when polls are on, so the sequences of every seed without
	// them are what they were.
	if s.m.Config.MinPoll > 0 && s.rng.IntN(4) == 0 {
		s.randomPoll()
		return
	}
	rng, j := s.rng, &s.m.Job
	smallDelay := func() time.Duration { return time.Duration(rng.IntN(120)) * sec }
	switch r := rng.IntN(100); {
	case r < 8: // time passes
		switch rng.IntN(20) {
		case 0:
			s.advance(time.Duration(1+rng.IntN(40)) * day)
		case 1, 2:
			s.advance(time.Duration(10+rng.IntN(180)) * minute)
		default:
			s.advance(smallDelay())
		}
	case r < 26: // the expected tick comes at its ETA, or late
		if j.TickNonce == 0 {
			return
		}
		if rng.IntN(4) > 0 {
			s.advanceTo(j.TickAt)
		}
		if rng.IntN(3) == 0 {
			s.advance(smallDelay())
		}
		s.step(sm.Tick{Nonce: j.TickNonce, Start: rng.IntN(2) == 0}, false)
	case r < 31: // an old tick is delivered again
		if len(s.ticks) == 0 {
			return
		}
		tl := s.ticks[rng.IntN(len(s.ticks))]
		// A tick that started its attempt itself is that attempt's start.
		started := slices.ContainsFunc(j.Active, func(inv sm.Invocation) bool { return inv.Nonce == tl.Nonce })
		s.step(sm.Tick{Nonce: tl.Nonce, Start: rng.IntN(2) == 0}, tl.Nonce != j.TickNonce && !started)
	case r < 47: // an unfinished invocation's StartInvocation comes
		if len(j.Active) == 0 {
			return
		}
		inv := j.Active[rng.IntN(len(j.Active))]
		if rng.IntN(4) > 0 {
			for _, st := range s.starts {
				if st.Nonce == inv.Nonce {
					s.advanceTo(st.At)
				}
			}
		}
		s.step(sm.Starting{Invocation: inv.ID, Attempt: inv.Attempt, Nonce: inv.Nonce}, false)
	case r < 52: // an old StartInvocation is delivered again
		if len(s.starts) == 0 {
			return
		}
		st := s.starts[rng.IntN(len(s.starts))]
		s.step(sm.Starting{Invocation: st.Invocation, Attempt: st.Attempt, Nonce: st.Nonce}, !s.current(st.Invocation, st.Attempt, st.Nonce))
	case r < 70: // the target reports on a launch, current or old
		if len(s.launches) == 0 {
			return
		}
		l := s.launches[len(s.launches)-1-rng.IntN(min(len(s.launches), 4))]
		if rng.IntN(5) == 0 {
			l = s.launches[rng.IntN(len(s.launches))]
		}
		s.advance(smallDelay())
		var e sm.Event
		switch rng.IntN(10) {
		case 0, 1:
			e = sm.Launched{Invocation: l.Invocation, Attempt: l.Attempt}
		case 2, 3, 4:
			e = sm.Ended{Invocation: l.Invocation, Attempt: l.Attempt, Succeeded: true}
		case 5, 6, 7:
			e = sm.Ended{Invocation: l.Invocation, Attempt: l.Attempt, Message: "exit 1"}
		case 8:
			e = sm.NotLaunched{Invocation: l.Invocation, Attempt: l.Attempt}
		default:
			e = sm.OutcomeUnknown{Invocation: l.Invocation, Attempt: l.Attempt}
		}
		s.step(e, !s.current(l.Invocation, l.Attempt, 0))
	case r < 73:
		s.step(sm.Triggered{}, false)
	case r < 75:
		// Drawn only when pauses may end, so the sequences of every seed
		// without them are what they were.
		var until time.Time
		if s.pauseUntil && rng.IntN(2) == 0 {
			until = s.m.Now.Add(time.Duration(1+rng.IntN(180)) * minute)
		}
		s.step(sm.PauseRequested{Note: "admin", Until: until}, false)
	case r < 78:
		s.advance(smallDelay())
		s.step(sm.ResumeRequested{}, false)
	case r < 80:
		id := ""
		if len(j.Active) > 0 && rng.IntN(2) == 0 {
			id = j.Active[rng.IntN(len(j.Active))].ID
		} else if rng.IntN(3) == 0 {
			id = "no-such-invocation"
		}
		s.step(sm.AbortRequested{Invocation: id}, false)
	case r < 92: // a watchdog pass, often when the timer has passed
		if !j.WatchdogTimerTs.IsZero() && rng.IntN(3) > 0 {
			s.advanceTo(j.WatchdogTimerTs)
		}
		s.step(sm.WatchdogExpired{}, false)
	case r < 97:
		s.removeOrRedefine(sm.Defined{})
	default:
		s.removeOrRedefine(sm.Removed{Reason: removedFromConfig})
	}
}

// randomPoll delivers a poll, the expected one (at its time, early or
// late) or an old one again, and answers the Check it may ask for as the
// target would, sometimes with an end that a push already reported.
func (s *sim) randomPoll() {
	rng := s.rng
	if len(s.polls) == 0 {
		return
	}
	p := s.polls[len(s.polls)-1-rng.IntN(min(len(s.polls), 3))]
	switch rng.IntN(3) {
	case 0:
		s.advanceTo(p.At)
	case 1:
		s.advanceTo(p.At.Add(time.Duration(rng.IntN(300)) * sec))
	}
	var current bool
	for _, inv := range s.m.Job.Active {
		current = current || inv.ID == p.Invocation && inv.Attempt == p.Attempt && inv.PollNonce == p.Nonce
	}
	s.step(sm.PollDue{Invocation: p.Invocation, Attempt: p.Attempt, Nonce: p.Nonce}, !current)
	if !s.running(p.Invocation, p.Attempt) {
		return
	}
	// The target's answer to the Check, and a push's, in either order.
	ended := sm.Ended{Invocation: p.Invocation, Attempt: p.Attempt, Succeeded: rng.IntN(2) == 0, Message: "ended"}
	switch rng.IntN(4) {
	case 0:
		s.step(ended, false)
		s.step(ended, true)
	case 1:
		s.step(sm.Launched{Invocation: p.Invocation, Attempt: p.Attempt, Message: "still running"}, true)
	}
}

// running reports whether the attempt is RUNNING.
func (s *sim) running(id string, attempt int) bool {
	for _, inv := range s.m.Job.Active {
		if inv.ID == id && inv.Attempt == attempt && inv.Status == sm.StatusRunning {
			return true
		}
	}
	return false
}

// current reports whether the attempt is unfinished (and, with a nonzero
// nonce, expects that StartInvocation).
func (s *sim) current(id string, attempt int, nonce int64) bool {
	for _, inv := range s.m.Job.Active {
		if inv.ID == id && inv.Attempt == attempt && (nonce == 0 || inv.Nonce == nonce) {
			return true
		}
	}
	return false
}

// finish lets every due tick come so that all occurrences up to the last
// instant are decided, then checks the end-of-run oracle.
func (s *sim) finish() {
	s.t.Helper()
	j := &s.m.Job
	if j.State == sm.Paused {
		s.step(sm.ResumeRequested{}, false)
	}
	// Deliver the expected tick at its ETA until the next occurrence lies
	// ahead of the clock: then no occurrence up to now is undecided.
	for i := 0; j.TickNonce != 0; i++ {
		if i > 100 {
			s.fatalf("the ticks never catch up with the clock")
		}
		s.advanceTo(j.TickAt)
		s.step(sm.Tick{Nonce: j.TickNonce}, false)
		if j.TickNonce == 0 || j.NextAt.After(s.m.Now) {
			break
		}
	}
	if !s.openSince.IsZero() {
		s.windows = append(s.windows, window{From: s.openSince, To: s.m.Now, Why: "enabled"})
	}
	if !s.cappedSince.IsZero() {
		s.capped = append(s.capped, window{From: s.cappedSince, To: s.m.Now, Why: "capped"})
	}
	s.checkInvocations()
	s.checkManual()
	if s.sched.Kind() == schedule.Cron {
		s.checkOccurrences()
	}
}

// checkInvocations: every invocation that was QUEUED has ended or is still
// unfinished, and nothing unfinished was never QUEUED.
func (s *sim) checkInvocations() {
	s.t.Helper()
	active := map[string]bool{}
	for _, inv := range s.m.Job.Active {
		active[inv.ID] = true
		if s.queued[inv.ID] != 1 {
			s.fatalf("%s is unfinished but was QUEUED %d times", inv.ID, s.queued[inv.ID])
		}
	}
	for id := range s.queued {
		if !active[id] && !s.last[id].Ended() {
			s.fatalf("%s was QUEUED, has not ended (last %s) and is not unfinished: lost", id, s.last[id])
		}
		if active[id] && s.last[id].Ended() {
			s.fatalf("%s ended %s but is still unfinished", id, s.last[id])
		}
	}
}

// checkManual: every trigger that was not refused is QUEUED, pending or
// skipped, exactly once.
func (s *sim) checkManual() {
	s.t.Helper()
	seen := map[string]int{}
	for id, n := range s.queued {
		if strings.HasPrefix(id, "manual-") {
			seen[id] += n
		}
	}
	for _, sk := range s.skips {
		if sk.Manual {
			seen[sk.ID] += sk.Count
		}
	}
	if p := s.m.Job.Pending; p != nil && p.Manual {
		seen[p.ID]++
	}
	for n := 1; n <= s.triggers; n++ {
		id := fmt.Sprintf("manual-%d", n)
		if seen[id] != 1 {
			s.fatalf("trigger %s accounted for %d times, want once", id, seen[id])
		}
		delete(seen, id)
	}
	if len(seen) > 0 {
		s.fatalf("manual invocations accounted for that were never triggered: %v", seen)
	}
}

// checkOccurrences is the occurrence oracle: every fire time of the
// schedule inside a window in which the job was enabled is accounted for
// exactly once — QUEUED, pending, or counted by a RecordSkipped — and none
// outside one is. The fire times come from the schedule package directly;
// each RecordSkipped's Count must equal the fire times from First to Last.
// Both sides are sorted lists of Unix seconds (cron fires on whole
// seconds), which keeps a month of every-minute fire times cheap.
func (s *sim) checkOccurrences() {
	s.t.Helper()
	var seen []int64
	for id, n := range s.queued {
		if strings.HasPrefix(id, "manual-") {
			continue
		}
		t, err := time.Parse("20060102T150405.999999999Z", id)
		if err != nil {
			s.fatalf("invocation id %q is not an occurrence id: %v", id, err)
		}
		for range n {
			seen = append(seen, t.Unix())
		}
	}
	for _, sk := range s.skips {
		// A DST gap's record is of wall-clock times that never existed,
		// which no schedule yields.
		if sk.Manual || sk.Reason == sm.SkipDSTGap {
			continue
		}
		n := 0
		if sk.Reason == sm.SkipCalendar {
			for t, why := range s.sched.CalendarSkipped(sk.First, sk.Last.Add(time.Nanosecond)) {
				if why == sk.Note {
					seen = append(seen, t.Unix())
					n++
				}
			}
		} else {
			for t := range s.sched.Between(sk.First, sk.Last.Add(time.Nanosecond)) {
				seen = append(seen, t.Unix())
				n++
			}
		}
		if n != sk.Count || sk.ID != sm.OccurrenceID(sk.First) {
			s.fatalf("%+v: %d fire times from First to Last, Count %d", sk, n, sk.Count)
		}
	}
	if p := s.m.Job.Pending; p != nil && !p.Manual {
		seen = append(seen, p.At.Unix())
	}
	slices.Sort(seen)

	var want []int64
	ended := map[int64]bool{}
	for _, w := range s.windows {
		for t := range s.sched.Between(w.From.Add(time.Nanosecond), w.To.Add(time.Nanosecond)) {
			want = append(want, t.Unix())
		}
		// After the last occurrence the calendars leave, the job has
		// ended, as past its window: what they remove then is no
		// occurrence's to record.
		var last time.Time
		_, more := s.sched.Next(w.To)
		if !more {
			last, _ = s.sched.Prev(w.To)
		}
		for t := range s.sched.CalendarSkipped(w.From.Add(time.Nanosecond), w.To.Add(time.Nanosecond)) {
			want = append(want, t.Unix())
			if !more && t.After(last) {
				ended[t.Unix()] = true
			}
		}
	}
	slices.Sort(want) // windows follow each other, but make sure
	optional := func(u int64) bool {
		return ended[u] || slices.ContainsFunc(s.capped, func(w window) bool { return u > w.From.Unix() && u <= w.To.Unix() })
	}

	for i, k := 0, 0; i < len(want) || k < len(seen); {
		switch {
		case i < len(want) && (k >= len(seen) || want[i] < seen[k]):
			if !optional(want[i]) {
				s.fatalf("occurrence %s of an enabled window is not accounted for (invariant 5); windows %s", off(time.Unix(want[i], 0)), s.formatWindows())
			}
			i++
		case k < len(seen) && (i >= len(want) || seen[k] < want[i]):
			s.fatalf("occurrence %s is accounted for once too often, or outside an enabled window; windows %s", off(time.Unix(seen[k], 0)), s.formatWindows())
		default:
			i, k = i+1, k+1
		}
	}
}

func (s *sim) formatWindows() string {
	var b strings.Builder
	for _, w := range s.windows {
		fmt.Fprintf(&b, "(%s, %s] %s; ", off(w.From), off(w.To), w.Why)
	}
	return b.String()
}
