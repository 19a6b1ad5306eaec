package statemachine_test

import (
	"testing"
	"time"

	"github.com/sundial-cron/sundial/schedule"
	sm "github.com/sundial-cron/sundial/statemachine"
)

func boundedSchedule(t testing.TB, expr string, opts schedule.Options) *schedule.Schedule {
	t.Helper()
	opts.JobID = testJobID
	s, err := schedule.Parse(expr, opts)
	if err != nil {
		t.Fatalf("schedule.Parse(%q): %v", expr, err)
	}
	return s
}

func calendar(t testing.TB, name string, loc *time.Location, weekdays []time.Weekday, dates ...string) *schedule.Calendar {
	t.Helper()
	var ranges []schedule.DateRange
	for _, d := range dates {
		day, err := schedule.ParseDate(d)
		if err != nil {
			t.Fatal(err)
		}
		ranges = append(ranges, schedule.DateRange{First: day, Last: day})
	}
	c, err := schedule.NewCalendar(name, loc, weekdays, ranges)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func calendarSkipped(first, last time.Time, count int, note string) sm.Action {
	return sm.RecordSkipped{ID: sm.OccurrenceID(first), First: first, Last: last, Count: count, Reason: sm.SkipCalendar, Note: note}
}

// A job ticks for its next occurrence a calendar keeps, and that tick
// records the occurrences the calendar removed before it, with their
// reason, as one record per run of them.
func TestCalendarSkipsAreRecordedAtTheNextTick(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "0 9 * * *", sm.Policy{})
	f.m.Schedule = boundedSchedule(t, "0 9 * * *", schedule.Options{Skip: []*schedule.Calendar{calendar(t, "holidays", nil, nil, "2026-03-03", "2026-03-04")}})
	mar5 := at(47*hour + 24*hour) // 2026-03-05 09:00
	f.step(t0, sm.Defined{}, tickLater(mar5, 1))
	o := occ(mar5)
	f.step(mar5, sm.Tick{Nonce: 1},
		calendarSkipped(at(23*hour), at(47*hour), 2, "on holidays"),
		record(o, 1, sm.StatusQueued, ""), start(o.ID, 1, 2, mar5), tickLater(mar5.Add(day), 3))
}

// Business days in New York across the spring-forward of 2026-03-08: the
// weekend's occurrences are recorded as not on business days, the
// holiday's as on holidays, each run on its own, and the next tick is the
// first business day's, on New York's clock.
func TestOnlyCalendarsAcrossDST(t *testing.T) {
	t.Parallel()
	ny, _ := time.LoadLocation("America/New_York")
	business := calendar(t, "business-days", nil, []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday})
	holidays := calendar(t, "holidays", nil, nil, "2026-03-09")
	f := newFixture(t, "30 2 * * *", sm.Policy{CatchupWindow: time.Hour})
	f.m.Schedule = boundedSchedule(t, "30 2 * * *", schedule.Options{Location: ny, Gap: schedule.GapShift,
		Only: []*schedule.Calendar{business}, Skip: []*schedule.Calendar{holidays}})
	fri := time.Date(2026, 3, 6, 2, 30, 0, 0, ny)
	sat, sun := time.Date(2026, 3, 7, 2, 30, 0, 0, ny), time.Date(2026, 3, 8, 3, 0, 0, 0, ny) // 02:30 does not exist: shifted
	mon, tue := time.Date(2026, 3, 9, 2, 30, 0, 0, ny), time.Date(2026, 3, 10, 2, 30, 0, 0, ny)
	f.job().Cursor = fri
	f.job().State = sm.Scheduled
	f.step(fri.Add(time.Minute), sm.Defined{}, tickLater(tue, 1))
	o := occ(tue)
	f.step(tue, sm.Tick{Nonce: 1},
		calendarSkipped(sat, sun, 2, "not on business-days"),
		calendarSkipped(mon, mon, 1, "on holidays"),
		record(o, 1, sm.StatusQueued, ""), start(o.ID, 1, 2, tue), tickLater(time.Date(2026, 3, 11, 2, 30, 0, 0, ny), 3))
}

// A pause with an end is resumed at that end by its own tick: what fell
// in the pause is recorded as paused but for what the catch-up window
// brings back, as a person's resume would.
func TestPauseUntilResumesAtItsEnd(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "* * * * *", sm.Policy{})
	f.step(t0, sm.Defined{}, tickLater(at(minute), 1))
	f.step(at(10*sec), sm.PauseRequested{Note: "deploy", Until: at(hour)}, tickLater(at(hour), 2))
	if j := f.job(); j.State != sm.Paused || !j.PausedUntil.Equal(at(hour)) || j.Reason.Note != "deploy" {
		t.Fatalf("after the pause: %s", formatJob(*j))
	}
	f.step(at(minute), sm.Tick{Nonce: 1}) // the tick the pause made stale
	f.step(at(30*minute), sm.Tick{Nonce: 2}, tickLater(at(hour), 3))
	o := occ(at(hour))
	f.step(at(hour), sm.Tick{Nonce: 3},
		skipped(at(minute), at(59*minute), 59, sm.SkipPaused),
		record(o, 1, sm.StatusQueued, ""), start(o.ID, 1, 4, at(hour)), tickLater(at(61*minute), 5))
	if j := f.job(); j.State != sm.Queued || !j.PausedUntil.IsZero() || j.Reason != (sm.Reason{}) {
		t.Fatalf("after the pause's end: %s", formatJob(*j))
	}
}

// A pause's end far ahead hops there as a far occurrence does.
func TestPauseUntilFarHops(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "0 9 * * *", sm.Policy{})
	f.step(t0, sm.Defined{}, tickLater(at(23*hour), 1))
	f.step(t0, sm.PauseRequested{Note: "quarter", Until: at(40 * day)}, tickLater(at(29*day), 2))
	f.step(at(29*day), sm.Tick{Nonce: 2}, tickLater(at(40*day), 3))
	f.step(at(40*day), sm.Tick{Nonce: 3},
		skipped(at(23*hour), at(40*day-hour), 40, sm.SkipPaused), tickLater(at(40*day+23*hour), 4))
}

// What else may happen to a pause with an end.
func TestPauseUntilRequests(t *testing.T) {
	t.Parallel()
	t.Run("a resume before the end makes its tick stale", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{})
		f.step(t0, sm.Defined{}, tickLater(at(minute), 1))
		f.step(t0, sm.PauseRequested{Note: "x", Until: at(hour)}, tickLater(at(hour), 2))
		f.step(at(90*sec), sm.ResumeRequested{}, skippedOne(occ(at(minute)), sm.SkipPaused), tickLater(at(2*minute), 3))
		if !f.job().PausedUntil.IsZero() {
			t.Fatalf("resumed, yet paused until %s", off(f.job().PausedUntil))
		}
		f.step(at(hour), sm.Tick{Nonce: 2})
	})
	t.Run("a second pause leaves the job as it is, unless it renotes it", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{})
		f.step(t0, sm.Defined{}, tickLater(at(minute), 1))
		f.step(t0, sm.PauseRequested{Note: "first", Until: at(hour)}, tickLater(at(hour), 2))
		// A bulk pause's: the job keeps its note and end.
		f.step(at(sec), sm.PauseRequested{Note: "second", Until: at(2 * hour)})
		f.step(at(2*sec), sm.PauseRequested{Note: "third"})
		if j := f.job(); j.Reason.Note != "first" || !j.PausedUntil.Equal(at(hour)) || j.TickNonce != 2 {
			t.Fatalf("after pauses that do not renote: %s", formatJob(*j))
		}
		// One job's pause anew: its note and end replace the job's.
		f.step(at(3*sec), sm.PauseRequested{Note: "fourth", Renote: true, Until: at(2 * hour)}, tickLater(at(2*hour), 3))
		f.step(at(4*sec), sm.PauseRequested{Note: "fifth", Renote: true})
		if j := f.job(); j.Reason.Note != "fifth" || !j.PausedUntil.IsZero() || j.TickNonce != 0 {
			t.Fatalf("after pauses that renote: %s", formatJob(*j))
		}
	})
	t.Run("a pause that ends before now is refused", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{})
		f.step(t0, sm.Defined{}, tickLater(at(minute), 1))
		f.refused(at(10*sec), sm.PauseRequested{Note: "x", Until: at(10 * sec)})
	})
	t.Run("the watchdog re-issues a lost end", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{})
		f.step(t0, sm.Defined{}, tickLater(at(minute), 1))
		f.step(t0, sm.PauseRequested{Note: "x", Until: at(hour)}, tickLater(at(hour), 2))
		f.step(at(hour+30*sec), sm.WatchdogExpired{}, tickLater(at(hour+30*sec), 3))
	})
	t.Run("a redefinition keeps the end", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{})
		f.step(t0, sm.Defined{}, tickLater(at(minute), 1))
		f.step(t0, sm.PauseRequested{Note: "x", Until: at(hour)}, tickLater(at(hour), 2))
		f.step(at(sec), sm.Redefining{})
		f.step(at(sec), sm.Defined{})
		if j := f.job(); j.TickNonce != 2 || !j.PausedUntil.Equal(at(hour)) {
			t.Fatalf("after a redefinition: %s", formatJob(*j))
		}
	})
	t.Run("a removal ends the pause for good", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, "* * * * *", sm.Policy{})
		f.step(t0, sm.Defined{}, tickLater(at(minute), 1))
		f.step(t0, sm.PauseRequested{Note: "x", Until: at(hour)}, tickLater(at(hour), 2))
		f.step(at(90*sec), sm.Removed{Reason: removedFromConfig}, skippedOne(occ(at(minute)), sm.SkipPaused))
		if j := f.job(); j.TickNonce != 0 || !j.PausedUntil.IsZero() {
			t.Fatalf("after the removal: %s", formatJob(*j))
		}
	})
}

// A job with a cap runs that many scheduled occurrences and then has no
// more: no tick, nothing recorded. Manual triggers do not count; a higher
// cap lets it go on, and a cap removed forgets the count.
func TestMaxRuns(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "* * * * *", sm.Policy{MaxRuns: 2, Overlap: sm.OverlapAllow, MaxConcurrent: 5})
	f.step(t0, sm.Defined{}, tickLater(at(minute), 1))
	f.step(at(10*sec), sm.Triggered{}, record(manual(1, at(10*sec)), 1, sm.StatusQueued, ""), start("manual-1", 1, 2, at(10*sec)))
	o1 := occ(at(minute))
	f.step(at(minute), sm.Tick{Nonce: 1}, record(o1, 1, sm.StatusQueued, ""), start(o1.ID, 1, 3, at(minute)), tickLater(at(2*minute), 4))
	o2 := occ(at(2 * minute))
	f.step(at(2*minute), sm.Tick{Nonce: 4}, record(o2, 1, sm.StatusQueued, ""), start(o2.ID, 1, 5, at(2*minute)))
	if j := f.job(); j.Runs != 2 || j.TickNonce != 0 {
		t.Fatalf("after two runs: %s", formatJob(*j))
	}
	f.step(at(3*minute), sm.Redefining{})
	f.m.Policy.MaxRuns = 3
	f.step(at(3*minute), sm.Defined{}, tickLater(at(4*minute), 6))
	f.step(at(3*minute+sec), sm.Redefining{})
	f.m.Policy.MaxRuns = 0
	f.step(at(3*minute+sec), sm.Defined{}, tickLater(at(4*minute), 7))
	if j := f.job(); j.Runs != 0 {
		t.Fatalf("the cap removed, yet Runs is %d", j.Runs)
	}
}

// A job whose active window has ended has no more occurrences: its last
// tick plans none, and nothing after the window is recorded.
func TestWindowEnds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "* * * * *", sm.Policy{})
	f.m.Schedule = boundedSchedule(t, "* * * * *", schedule.Options{Active: schedule.Window{From: at(90 * sec), Until: at(2*minute + 30*sec)}})
	f.step(t0, sm.Defined{}, tickLater(at(2*minute), 1))
	o := occ(at(2 * minute))
	f.step(at(2*minute), sm.Tick{Nonce: 1}, record(o, 1, sm.StatusQueued, ""), start(o.ID, 1, 2, at(2*minute)))
	if j := f.job(); j.TickNonce != 0 {
		t.Fatalf("past its window, yet it ticks: %s", formatJob(*j))
	}
	f.step(at(hour), sm.Removed{Reason: removedFromConfig},
		sm.Record{Occurrence: o, Attempt: 1, Status: sm.StatusAborted, Message: "the job was disabled: removed from config"})
}

// TestProperty_CalendarsWindowsCaps runs random event sequences, as
// TestProperty_RandomSequences does, over schedules in New York (which
// springs forward on 2026-03-08, six days after t0) bounded by random
// calendars in their own zones or the job's, random active windows and
// random caps, with pauses that may end by themselves. On top of what
// that test checks: every fire time of the schedule while the job was
// enabled is run, or recorded with its reason once, a calendar's with the
// calendar's (sim.checkOccurrences); none outside the window is; no job
// runs more scheduled occurrences than its cap; and a pause with an end
// always has a tick for it.
func TestProperty_CalendarsWindowsCaps(t *testing.T) {
	t.Parallel()
	ny, _ := time.LoadLocation("America/New_York")
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	exprs := []string{"* * * * *", "*/5 * * * *", "0 * * * *", "30 2 * * *", "0 0 * * *"}
	cases, steps := 600, 200
	if testing.Short() {
		cases = 80
	}
	for c := range cases {
		seed := *propSeed + 0x1000 + uint64(c)
		rng := newRand(seed)
		expr := exprs[rng.IntN(len(exprs))]
		opts := schedule.Options{JobID: testJobID, Location: ny, Gap: []schedule.Gap{schedule.GapSkip, schedule.GapShift}[rng.IntN(2)]}
		randomCal := func(name string) *schedule.Calendar {
			loc := []*time.Location{nil, time.UTC, tokyo}[rng.IntN(3)]
			var ws []time.Weekday
			for w := range 7 {
				if rng.IntN(3) == 0 {
					ws = append(ws, time.Weekday(w))
				}
			}
			var dates []string
			for range rng.IntN(12) {
				dates = append(dates, t0.AddDate(0, 0, rng.IntN(60)-2).Format(time.DateOnly))
			}
			return calendar(t, name, loc, ws, dates...)
		}
		for i := range rng.IntN(3) {
			opts.Skip = append(opts.Skip, randomCal("skip"+itoa(i)))
		}
		for i := range rng.IntN(2) {
			opts.Only = append(opts.Only, randomCal("only"+itoa(i)))
		}
		if rng.IntN(3) == 0 {
			opts.Active.From = t0.Add(time.Duration(rng.IntN(72*60)) * minute)
		}
		if rng.IntN(3) == 0 {
			opts.Active.Until = t0.Add(time.Duration(72*60+rng.IntN(30*24*60)) * minute)
		}
		p := randomPolicy(rng)
		p.MaxRuns = []int64{0, 0, 1, 3, 20}[rng.IntN(5)]
		s := newSimOf(t, seed, expr, boundedSchedule(t, expr, opts), p)
		s.pauseUntil = true
		s.log = append(s.log, "(rerun with -run TestProperty_CalendarsWindowsCaps -statemachine.case="+itoa(c)+")")
		if *propCase >= 0 && c != *propCase {
			continue
		}
		s.step(sm.Defined{}, false)
		for range steps {
			s.randomStep()
		}
		s.finish()
	}
}
