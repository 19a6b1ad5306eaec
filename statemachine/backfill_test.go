package statemachine_test

import (
	"testing"
	"time"

	sm "github.com/sundial-cron/sundial/statemachine"
)

// backfilled is occurrence t as a backfill runs it.
func backfilled(t time.Time) sm.Occurrence {
	o := occ(t)
	o.Backfill = true
	return o
}

// eachRecorded answers Machine.Recorded one id at a time with has.
func eachRecorded(has func(id string) bool) func(ids []string) []bool {
	return func(ids []string) []bool {
		out := make([]bool, len(ids))
		for i, id := range ids {
			out[i] = has(id)
		}
		return out
	}
}

// TestBackfill_RunsUnrecordedOneAtATime: a backfill of three hourly
// occurrences before the job existed starts them oldest first, the next
// only once the last has ended, skips the one that has a record, and ends
// when none is left.
func TestBackfill_RunsUnrecordedOneAtATime(t *testing.T) {
	f := newFixture(t, "0 * * * *", sm.Policy{})
	recorded := map[string]bool{sm.OccurrenceID(at(-2 * hour)): true}
	f.m.Recorded = eachRecorded(func(id string) bool { return recorded[id] })
	f.step(at(0), sm.Defined{}, tickLater(at(hour), 1))
	f.step(at(sec), sm.BackfillRequested{From: at(-3 * hour), To: at(hour)},
		record(backfilled(at(-3*hour)), 1, sm.StatusQueued, ""),
		start(sm.OccurrenceID(at(-3*hour)), 1, 2, at(sec)))
	if got := f.job().Backfill; got == nil || !got.To.Equal(at(time.Nanosecond)) {
		t.Fatalf("Backfill = %+v, want one cut at the cursor", got)
	}
	id := sm.OccurrenceID(at(-3 * hour))
	f.step(at(2*sec), sm.Starting{Invocation: id, Attempt: 1, Nonce: 2},
		record(backfilled(at(-3*hour)), 1, sm.StatusLaunching, ""), launch(id, 1))
	// -2h is recorded: the next is -1h.
	f.step(at(3*sec), sm.Ended{Invocation: id, Attempt: 1, Succeeded: true},
		record(backfilled(at(-3*hour)), 1, sm.StatusSucceeded, ""),
		record(backfilled(at(-hour)), 1, sm.StatusQueued, ""),
		start(sm.OccurrenceID(at(-hour)), 1, 3, at(3*sec)))
	id = sm.OccurrenceID(at(-hour))
	f.step(at(4*sec), sm.Starting{Invocation: id, Attempt: 1, Nonce: 3},
		record(backfilled(at(-hour)), 1, sm.StatusLaunching, ""), launch(id, 1))
	// The range is cut at the cursor, 0h: the schedule's first tick is
	// for 1h, so the occurrence at 0h is the backfill's.
	f.step(at(5*sec), sm.Ended{Invocation: id, Attempt: 1, Succeeded: true},
		record(backfilled(at(-hour)), 1, sm.StatusSucceeded, ""),
		record(backfilled(at(0)), 1, sm.StatusQueued, ""),
		start(sm.OccurrenceID(at(0)), 1, 4, at(5*sec)))
	id = sm.OccurrenceID(at(0))
	f.step(at(6*sec), sm.Starting{Invocation: id, Attempt: 1, Nonce: 4},
		record(backfilled(at(0)), 1, sm.StatusLaunching, ""), launch(id, 1))
	f.step(at(7*sec), sm.Ended{Invocation: id, Attempt: 1, Succeeded: false},
		record(backfilled(at(0)), 1, sm.StatusFailed, ""))
	if f.job().Backfill != nil {
		t.Fatalf("Backfill = %+v after its last occurrence, want nil", f.job().Backfill)
	}
}

// TestBackfill_Refusals: an empty range, a range wholly after the cursor,
// a second backfill while one is under way, an interval schedule, a
// disabled job, and a cancel with nothing to cancel are refused and change
// nothing.
func TestBackfill_Refusals(t *testing.T) {
	f := newFixture(t, "0 * * * *", sm.Policy{})
	f.step(at(0), sm.Defined{}, tickLater(at(hour), 1))
	f.refused(at(sec), sm.BackfillRequested{From: at(-hour), To: at(-hour)})
	f.refused(at(sec), sm.BackfillRequested{From: at(sec), To: at(2 * hour)})
	f.refused(at(sec), sm.BackfillCanceled{})
	f.step(at(sec), sm.PauseRequested{})
	f.step(at(2*sec), sm.BackfillRequested{From: at(-2 * hour), To: at(-hour)})
	f.refused(at(3*sec), sm.BackfillRequested{From: at(-5 * hour), To: at(-4 * hour)})
	f.step(at(4*sec), sm.Removed{Reason: removedFromConfig})
	if f.job().Backfill != nil {
		t.Fatal("a disabled job kept its backfill")
	}
	f.refused(at(5*sec), sm.BackfillRequested{From: at(-2 * hour), To: at(-hour)})

	g := newFixture(t, "@every 90s", sm.Policy{})
	g.step(at(0), sm.Defined{}, tickLater(at(90*sec), 1))
	g.refused(at(sec), sm.BackfillRequested{From: at(-hour), To: at(0)})

	// A triggered job has no occurrences of its own, and an hourly one none
	// between two hours: a backfill would run nothing. Before, it was
	// accepted and audited, and ran nothing.
	tr := newFixture(t, "triggered", sm.Policy{})
	tr.step(at(0), sm.Defined{})
	tr.refused(at(sec), sm.BackfillRequested{From: at(-hour), To: at(0)})
	f.step(at(6*sec), sm.Defined{}, tickLater(at(hour), 2))
	f.refused(at(7*sec), sm.BackfillRequested{From: at(-hour + minute), To: at(-minute)})
}

// TestBackfill_WaitsForPauseAndLiveRun: a backfill asked for while the job
// is paused starts nothing until the resume; asked for while a live
// invocation runs, it starts nothing until that ends; a cancel leaves the
// rest unstarted and unrecorded.
func TestBackfill_WaitsForPauseAndLiveRun(t *testing.T) {
	f := newFixture(t, "0 * * * *", sm.Policy{})
	f.step(at(0), sm.Defined{}, tickLater(at(hour), 1))
	f.step(at(hour), sm.Tick{Nonce: 1},
		record(occ(at(hour)), 1, sm.StatusQueued, ""), start(sm.OccurrenceID(at(hour)), 1, 2, at(hour)),
		tickLater(at(2*hour), 3))
	f.step(at(hour+sec), sm.BackfillRequested{From: at(-3 * hour), To: at(-hour)})
	live := sm.OccurrenceID(at(hour))
	f.step(at(hour+2*sec), sm.Starting{Invocation: live, Attempt: 1, Nonce: 2},
		record(occ(at(hour)), 1, sm.StatusLaunching, ""), launch(live, 1))
	f.step(at(hour+3*sec), sm.PauseRequested{})
	f.step(at(hour+4*sec), sm.Ended{Invocation: live, Attempt: 1, Succeeded: true},
		record(occ(at(hour)), 1, sm.StatusSucceeded, ""))
	f.step(at(hour+5*sec), sm.ResumeRequested{},
		tickLater(at(2*hour), 4),
		record(backfilled(at(-3*hour)), 1, sm.StatusQueued, ""),
		start(sm.OccurrenceID(at(-3*hour)), 1, 5, at(hour+5*sec)))
	f.step(at(hour+6*sec), sm.BackfillCanceled{})
	if f.job().Backfill != nil {
		t.Fatal("the backfill is still under way after its cancel")
	}
	id := sm.OccurrenceID(at(-3 * hour))
	f.step(at(hour+7*sec), sm.Starting{Invocation: id, Attempt: 1, Nonce: 5},
		record(backfilled(at(-3*hour)), 1, sm.StatusLaunching, ""), launch(id, 1))
	f.step(at(hour+8*sec), sm.Ended{Invocation: id, Attempt: 1, Succeeded: true},
		record(backfilled(at(-3*hour)), 1, sm.StatusSucceeded, ""))
}

// TestProperty_BackfillRunsNoOccurrenceTwice: under random interleavings
// of ticks, triggers, backfills (a second one over the same or an
// overlapping range, and cancels), pauses, task deliveries and target
// outcomes, over every overlap policy, no occurrence id is queued twice:
// the host refuses a second QUEUED record of an id, as the store does, and
// the machine never asks for one. The cases bound a step's looks to 1-4
// occurrences, so backfills go on by the ticks due now that the bound
// brings, and no step looks at more.
func TestProperty_BackfillRunsNoOccurrenceTwice(t *testing.T) {
	cases, steps := 400, 150
	if testing.Short() {
		cases = 60
	}
	overlaps := []sm.Overlap{sm.OverlapSkip, sm.OverlapQueueOne, sm.OverlapAllow, sm.OverlapReplace}
	for c := range cases {
		rng := newRand(*propSeed + uint64(c))
		expr := []string{"*/5 * * * *", "0 * * * *", "* * * * *"}[rng.IntN(3)]
		p := sm.Policy{Overlap: overlaps[rng.IntN(len(overlaps))], MaxConcurrent: 1 + rng.IntN(2), MaxAttempts: 1 + rng.IntN(2), CatchupWindow: time.Duration(rng.IntN(2)) * hour}
		var nonce int64
		m := &sm.Machine{JobID: testJobID, Schedule: mustParse(t, expr), Policy: p, Config: cfg,
			NewNonce: func() int64 { nonce++; return nonce }}
		m.Config.BackfillScan = 1 + c%4
		records := map[string]sm.Status{}
		looked := 0
		m.Recorded = eachRecorded(func(id string) bool { looked++; _, ok := records[id]; return ok })
		// Some occurrences before the job existed already have records
		// (an earlier life of the job, or a backfill of another server).
		for i := range 6 {
			if rng.IntN(2) == 0 {
				records[sm.OccurrenceID(at(-time.Duration(i+1)*hour))] = sm.StatusSucceeded
			}
		}
		var tasks []sm.StartInvocation
		var launches []sm.Launch
		now := at(0)
		var log []string
		apply := func(e sm.Event) {
			m.Now = now
			m.Actions = nil
			log = append(log, off(now)+" "+describe(e))
			looked = 0
			err := m.Step(e)
			if looked > m.Config.BackfillScan {
				t.Fatalf("case %d: a step looked at %d occurrences, more than %d\n%s", c, looked, m.Config.BackfillScan, tail(log))
			}
			if err != nil {
				return
			}
			for _, a := range m.Actions {
				switch a := a.(type) {
				case sm.Record:
					if _, ok := records[a.ID]; ok && a.Status == sm.StatusQueued {
						t.Fatalf("case %d: occurrence %s queued twice\n%s", c, a.ID, tail(log))
					}
					records[a.ID] = a.Status
				case sm.RecordSkipped:
					if _, ok := records[a.ID]; ok {
						t.Fatalf("case %d: occurrence %s recorded as skipped after its record\n%s", c, a.ID, tail(log))
					}
					records[a.ID] = sm.StatusSkipped
				case sm.StartInvocation:
					tasks = append(tasks, a)
				case sm.Launch:
					launches = append(launches, a)
				}
			}
		}
		apply(sm.Defined{})
		for range steps {
			switch r := rng.IntN(12); {
			case r < 3:
				now = now.Add(time.Duration(rng.IntN(90)) * minute)
				apply(sm.Tick{Nonce: m.Job.TickNonce, Start: rng.IntN(2) == 0})
			case r == 3:
				apply(sm.Triggered{})
			case r < 6:
				from := at(-time.Duration(rng.IntN(8)) * hour)
				apply(sm.BackfillRequested{From: from, To: now.Add(time.Duration(rng.IntN(3)-1) * hour)})
			case r == 6:
				apply(sm.BackfillCanceled{})
			case r == 7:
				if m.Job.State == sm.Paused {
					apply(sm.ResumeRequested{})
				} else {
					apply(sm.PauseRequested{})
				}
			case r < 10 && len(tasks) > 0:
				k := rng.IntN(len(tasks))
				s := tasks[k]
				tasks = append(tasks[:k], tasks[k+1:]...)
				now = later(now, s.At)
				apply(sm.Starting{Invocation: s.Invocation, Attempt: s.Attempt, Nonce: s.Nonce})
			case len(launches) > 0:
				k := rng.IntN(len(launches))
				l := launches[k]
				launches = append(launches[:k], launches[k+1:]...)
				now = now.Add(time.Duration(rng.IntN(30)) * minute)
				apply(sm.Ended{Invocation: l.Invocation, Attempt: l.Attempt, Succeeded: rng.IntN(3) > 0})
			}
		}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func tail(log []string) string {
	if len(log) > *propTail {
		log = log[len(log)-*propTail:]
	}
	s := ""
	for _, l := range log {
		s += "  " + l + "\n"
	}
	return s
}

// TestBackfill_ARecordedYearIsWalkedByBoundedSteps: a backfill over a year
// of an every-minute job whose occurrences all have records but one looks
// at no more than BackfillScan of them per step; a step that finds none
// to run plans a tick due now in place of the job's next one (not a stale
// second tick beside it), and that tick's step goes on where the last
// stopped. A step asks for its occurrences' records in batches doubling
// from one. With the clock held before the job's next occurrence, the
// backfill walks the year to its end, runs the one occurrence without a
// record once, looks at each occurrence once (but for part of the batch
// that found it), and leaves the job's tick where the schedule has it.
func TestBackfill_ARecordedYearIsWalkedByBoundedSteps(t *testing.T) {
	f := newFixture(t, "* * * * *", sm.Policy{})
	scan := f.m.Config.BackfillScan
	from, hole := at(-365*day), at(-100*day+37*minute)
	looked, lookedInStep, asked := map[string]int{}, 0, 0
	f.m.Recorded = func(ids []string) []bool {
		asked++
		return eachRecorded(func(id string) bool {
			looked[id]++
			lookedInStep++
			return id != sm.OccurrenceID(hole)
		})(ids)
	}
	f.step(at(0), sm.Defined{}, tickLater(at(minute), 1))
	f.step(at(sec), sm.BackfillRequested{From: from, To: at(0)}, tickLater(at(sec), 2))
	if n := len(looked); n != scan {
		t.Fatalf("the first step looked at %d occurrences, want %d", n, scan)
	}
	// In batches of 1, 2, 4, ... 256 and the 489 left: a host reads its
	// store ten times, not a thousand.
	if asked != 10 {
		t.Fatalf("the first step asked Recorded %d times, want 10", asked)
	}
	if got, want := f.job().Backfill.Next, from.Add(time.Duration(scan-1)*minute+time.Nanosecond); !got.Equal(want) {
		t.Fatalf("Backfill.Next = %s, want %s: just past the last occurrence looked at", off(got), off(want))
	}
	// The tick's step hops back toward at(minute) and would post that
	// tick (nonce 3); finding nothing again, it posts one due now instead.
	lookedInStep = 0
	f.step(at(sec), sm.Tick{Nonce: 2}, tickLater(at(sec), 4))

	now, steps, queued := at(2*sec), 2, 0
	for f.job().Backfill != nil {
		if steps++; steps > 1000 {
			t.Fatalf("the backfill is still under way after %d steps at Next %s", steps, off(f.job().Backfill.Next))
		}
		j := f.job()
		var e sm.Event
		switch {
		case len(j.Active) == 1 && j.Active[0].Status == sm.StatusQueued:
			e = sm.Starting{Invocation: j.Active[0].ID, Attempt: 1, Nonce: j.Active[0].Nonce}
		case len(j.Active) == 1:
			e = sm.Ended{Invocation: j.Active[0].ID, Attempt: 1, Succeeded: true}
		case j.TickAt.After(now):
			t.Fatalf("the backfill stopped at Next %s: the next tick is at %s", off(j.Backfill.Next), off(j.TickAt))
		default:
			e = sm.Tick{Nonce: j.TickNonce}
		}
		f.m.Now, lookedInStep = now, 0
		if err := f.m.Step(e); err != nil {
			t.Fatal(err)
		}
		if lookedInStep > scan {
			t.Fatalf("at %s, %s: looked at %d occurrences, more than %d", off(now), describe(e), lookedInStep, scan)
		}
		checkWatchdog(t, f.m)
		for _, a := range f.m.Actions {
			if r, ok := a.(sm.Record); ok && r.Status == sm.StatusQueued {
				if r.At != hole || !r.Backfill {
					t.Fatalf("at %s: queued %+v, want only the backfilled occurrence %s", off(now), r, off(hole))
				}
				queued++
			}
		}
		f.m.Actions = nil
	}
	if queued != 1 {
		t.Errorf("the occurrence without a record was queued %d times, want 1", queued)
	}
	want := 0
	for range f.m.Schedule.Between(from, at(0)) {
		want++
	}
	if len(looked) != want {
		t.Errorf("looked at %d occurrences, want the range's %d", len(looked), want)
	}
	// The batch that found the hole had looked past it; the step after
	// its run looks there again, and only there.
	again := 0
	for id, n := range looked {
		if n != 1 && (n != 2 || id <= sm.OccurrenceID(hole)) {
			t.Errorf("occurrence %s looked at %d times, want once (twice only just after %s)", id, n, off(hole))
		}
		if n == 2 {
			again++
		}
	}
	if again >= scan {
		t.Errorf("%d occurrences looked at twice, want fewer than one batch", again)
	}
	if j := f.job(); !j.NextAt.Equal(at(minute)) || j.TickAt.Before(now) {
		t.Errorf("the job's tick is at %s for %s, want one for %s", off(j.TickAt), off(j.NextAt), off(at(minute)))
	}
}

// TestBackfill_ATickThatLetItGoOnWaitsOutTheJitter: the tick due now that
// a backfill's bounded step plans may come, behind a backlog, after the
// job's next occurrence but before its jitter has passed; that occurrence
// then waits for its jitter, as its own tick would have, rather than
// running early.
func TestBackfill_ATickThatLetItGoOnWaitsOutTheJitter(t *testing.T) {
	f := newFixture(t, "0 * * * *", sm.Policy{Jitter: 10 * minute})
	f.m.Config.BackfillScan = 1
	f.m.Recorded = eachRecorded(func(string) bool { return true })
	j := sm.Jitter(testJobID, at(hour), 10*minute)
	if j < 2*time.Millisecond {
		t.Fatalf("the 11:00 occurrence's jitter is %s: the test needs one longer", j)
	}
	f.step(at(0), sm.Defined{}, tickLater(at(hour+j), 1))
	f.step(at(sec), sm.BackfillRequested{From: at(-2 * hour), To: at(0)}, tickLater(at(sec), 2))
	// The tick comes at 11:00 and a bit, before 11:00's jitter has passed:
	// it ticks for 11:00 again, and the backfill, finding the one
	// occurrence left recorded, ends.
	f.step(at(hour+j-time.Millisecond), sm.Tick{Nonce: 2}, tickLater(at(hour+j), 3))
	if f.job().Backfill != nil {
		t.Fatalf("Backfill = %+v, want it ended", f.job().Backfill)
	}
}

// TestBackfill_AnUnansweredOccurrenceDoesNotRun: a host whose Recorded
// answers fewer ids than it was asked about cannot be trusted on the
// others, so they do not run: not running is what keeps an occurrence
// from running twice.
func TestBackfill_AnUnansweredOccurrenceDoesNotRun(t *testing.T) {
	f := newFixture(t, "0 * * * *", sm.Policy{})
	f.m.Recorded = func(ids []string) []bool { return make([]bool, len(ids)-1) }
	f.step(at(0), sm.Defined{}, tickLater(at(hour), 1))
	// Asked about -3h alone first, the host answers nothing; asked about
	// -2h and -1h, it answers for -2h alone, which has no record.
	f.step(at(sec), sm.BackfillRequested{From: at(-3 * hour), To: at(0)},
		record(backfilled(at(-2*hour)), 1, sm.StatusQueued, ""),
		start(sm.OccurrenceID(at(-2*hour)), 1, 2, at(sec)))
}
