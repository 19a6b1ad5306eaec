package engine_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/schedule"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store/sqlite/sqlitetest"
)

// TestPauseUntilResumesAtItsEnd: a pause with an end, on the fake clock
// over SQLite and the local dispatcher: nothing launches while it lasts,
// the engine resumes the job at its end by itself, what fell in the pause
// is recorded as paused, the schedule goes on from there, and the trail
// says who paused it until when and that it ended then.
func TestPauseUntilResumesAtItsEnd(t *testing.T) {
	h := newHarness(t, engine.Options{})
	h.define("p/job", "*/10 * * * *", statemachine.Policy{}, "rec")
	h.set(t0.Add(time.Minute))
	end := t0.Add(time.Hour + 5*time.Minute)
	if err := h.eng.PauseUntil(h.ctx, "p/job", bob, "the database migrates", end); err != nil {
		t.Fatal(err)
	}
	h.runUntil(end.Add(-time.Second))
	if launches, _ := h.tgt.total(); launches != 0 {
		t.Fatalf("%d launches during the pause", launches)
	}
	if st := h.job("p/job").State; st != string(statemachine.Paused) {
		t.Fatalf("state %s before the pause's end, want PAUSED", st)
	}
	h.runUntil(t0.Add(2 * time.Hour))
	if st := h.job("p/job").State; st == string(statemachine.Paused) {
		t.Fatal("still PAUSED after the pause's end")
	}
	var ran, paused []string
	for _, inv := range h.invocations("p/job") {
		switch {
		case inv.Status == string(statemachine.StatusSkipped) && inv.Reason == string(statemachine.SkipPaused):
			paused = append(paused, inv.Occurrence.UTC().Format("15:04")+"-"+inv.Last.UTC().Format("15:04"))
		case inv.Status == string(statemachine.StatusSucceeded):
			ran = append(ran, inv.Occurrence.UTC().Format("15:04"))
		default:
			t.Errorf("unexpected record %s %s %s", inv.ID, inv.Status, inv.Message)
		}
	}
	if want := []string{"10:10-11:00"}; !reflect.DeepEqual(paused, want) {
		t.Errorf("recorded as paused: %v, want %v", paused, want)
	}
	if want := []string{"11:10", "11:20", "11:30", "11:40", "11:50", "12:00"}; !reflect.DeepEqual(sortedStrings(ran), want) {
		t.Errorf("ran %v, want %v", ran, want)
	}
	got := h.audit("p/job")
	for i := range got {
		got[i].At, got[i].Until = got[i].At.UTC(), got[i].Until.UTC()
	}
	want := []engine.AuditEntry{
		{At: end, By: engine.Itself, Action: engine.ActionResume, Reason: "the pause ended as asked, at 2026-03-02T11:05:00Z"},
		{At: t0.Add(time.Minute), By: bob, Action: engine.ActionPause, Reason: "the database migrates", Until: end},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("audit:\n%+v\nwant\n%+v", got, want)
	}
}

// TestPauseUntilSurvivesALostTick: the pause's end is a task like any
// other; lost, the watchdog issues it again and the job resumes.
func TestPauseUntilSurvivesALostTick(t *testing.T) {
	h := newHarness(t, engine.Options{})
	h.define("p/job", "*/10 * * * *", statemachine.Policy{}, "rec")
	end := t0.Add(30 * time.Minute)
	if err := h.eng.PauseUntil(h.ctx, "p/job", bob, "x", end); err != nil {
		t.Fatal(err)
	}
	if err := sqlitetest.PurgeTasks(h.ctx, h.path); err != nil {
		t.Fatal(err)
	}
	h.runUntil(t0.Add(time.Hour))
	if st := h.job("p/job").State; st == string(statemachine.Paused) {
		t.Fatal("still PAUSED: the lost end was never repaired")
	}
}

// A pause that would end before now is refused and changes nothing.
func TestPauseUntilInThePastIsRefused(t *testing.T) {
	h := newHarness(t, engine.Options{})
	h.define("p/job", "*/10 * * * *", statemachine.Policy{}, "rec")
	err := h.eng.PauseUntil(h.ctx, "p/job", bob, "x", t0.Add(-time.Minute))
	if !errors.Is(err, statemachine.ErrRefused) {
		t.Fatalf("err %v, want ErrRefused", err)
	}
	if st := h.job("p/job").State; st != string(statemachine.Scheduled) || len(h.audit("p/job")) != 0 {
		t.Errorf("a refused pause changed the job: %s, audit %v", st, h.audit("p/job"))
	}
}

// TestCalendarSkipsAreRecordedWithTheirReason: a job that skips a holiday
// launches nothing that day, and the day's occurrences are one record,
// reason calendar, whose message names the calendar; a cap then stops it.
func TestCalendarSkipsAreRecordedWithTheirReason(t *testing.T) {
	h := newHarness(t, engine.Options{})
	day, _ := schedule.ParseDate("2026-03-03")
	hol, err := schedule.NewCalendar("holidays", nil, nil, []schedule.DateRange{{First: day, Last: day}})
	if err != nil {
		t.Fatal(err)
	}
	def := engine.Definition{Schedule: "0 */6 * * *", Target: "rec", SkipCalendars: []*schedule.Calendar{hol},
		Policy: statemachine.Policy{MaxRuns: 3}}
	if err := h.eng.Define(h.ctx, "p/job", def); err != nil {
		t.Fatal(err)
	}
	h.runUntil(t0.Add(5 * 24 * time.Hour))
	var got []string
	for _, inv := range h.invocations("p/job") {
		got = append(got, inv.Occurrence.UTC().Format("01-02 15:04")+" "+inv.Status+" "+inv.Message)
	}
	want := []string{
		"03-02 12:00 SUCCEEDED ok",
		"03-02 18:00 SUCCEEDED ok",
		"03-03 00:00 SKIPPED 4 occurrences skipped: calendar (on holidays)",
		"03-04 00:00 SUCCEEDED ok",
	}
	if !reflect.DeepEqual(sortedStrings(got), want) {
		t.Errorf("records:\n%s\nwant\n%s", strings.Join(sortedStrings(got), "\n"), strings.Join(want, "\n"))
	}
	if j := h.job("p/job"); !j.WatchdogTimerTs.IsZero() {
		t.Errorf("past its cap, the job still waits for a task (watchdog timer %s)", j.WatchdogTimerTs)
	}
	v, err := h.eng.View(h.ctx, "p/job")
	if err != nil {
		t.Fatal(err)
	}
	if v.State.Runs != 3 {
		t.Errorf("Runs = %d, want 3", v.State.Runs)
	}
}

func sortedStrings(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// TestABulkPauseUntilAnEndLeavesAPausedJobAsItIs: a bulk pause with an
// end pauses the jobs running until then, each resumed by the engine at
// it and audited with it; a job paused already keeps its own reason and
// end (a bulk pause never resumes what someone paused for longer, nor
// holds what they paused for less); an end that is not after now is
// refused before any job changes.
func TestABulkPauseUntilAnEndLeavesAPausedJobAsItIs(t *testing.T) {
	h := newHarness(t, engine.Options{})
	for _, id := range []string{"p/a", "p/b", "p/own"} {
		h.define(id, "*/10 * * * *", statemachine.Policy{}, "rec")
	}
	h.set(t0.Add(time.Minute))
	own := t0.Add(3 * time.Hour)
	if err := h.eng.PauseUntil(h.ctx, "p/own", bob, "its own reason", own); err != nil {
		t.Fatal(err)
	}
	if _, err := h.eng.PauseJobs(h.ctx, "p", engine.Selection{}, bob, "too soon", t0); !errors.Is(err, statemachine.ErrRefused) {
		t.Fatalf("a bulk pause ending before now: %v, want ErrRefused", err)
	}
	if st := h.job("p/a").State; st != string(statemachine.Scheduled) {
		t.Fatalf("p/a is %s after a refused bulk pause", st)
	}
	end := t0.Add(time.Hour + 5*time.Minute)
	res, err := h.eng.PauseJobs(h.ctx, "p", engine.Selection{}, bob, "incident 9", end)
	if err != nil || !slices.Equal(res.Changed, []string{"p/a", "p/b"}) || !slices.Equal(res.Unchanged, []string{"p/own"}) {
		t.Fatalf("the bulk pause: %+v, %v; want p/a and p/b paused, p/own unchanged", res, err)
	}
	v, err := h.eng.View(h.ctx, "p/own")
	if err != nil {
		t.Fatal(err)
	}
	if v.State.Reason.Note != "its own reason" || !v.State.PausedUntil.Equal(own) {
		t.Errorf("p/own after the bulk pause: %q until %s; want its own reason until %s", v.State.Reason.Note, v.State.PausedUntil, own)
	}
	h.runUntil(t0.Add(2 * time.Hour))
	for _, id := range []string{"p/a", "p/b"} {
		if st := h.job(id).State; st == string(statemachine.Paused) {
			t.Errorf("%s still PAUSED after the bulk pause's end", id)
		}
		if a := h.audit(id); len(a) != 2 || a[1].Action != engine.ActionPause || !a[1].Until.Equal(end) || a[0].By != engine.Itself {
			t.Errorf("%s's audit: %+v; want the pause until %s, then its end", id, a, end)
		}
	}
	if st := h.job("p/own").State; st != string(statemachine.Paused) {
		t.Errorf("p/own is %s before its own end", st)
	}
}
