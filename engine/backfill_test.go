package engine_test

import (
	"errors"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// TestBackfill_RunsEachUnrecordedOccurrenceOnce: on SQLite, a backfill of
// an hourly job runs the occurrences before the job existed that have no
// record, once each, marked as backfill; those with a record (run, or
// skipped) are left alone; the range is cut where the schedule takes over,
// so the live 11:00 runs once, by its tick; and the same backfill asked
// again runs nothing.
func TestBackfill_RunsEachUnrecordedOccurrenceOnce(t *testing.T) {
	h := newHarness(t, engine.Options{})
	const id = "p/job"
	h.define(id, "0 * * * *", statemachine.Policy{}, "rec")
	hr := func(n int) time.Time { return time.Date(2026, 3, 2, n, 0, 0, 0, time.UTC) }
	// An earlier life of the job ran 08:00 and skipped 07:00.
	if _, err := h.st.Update(h.ctx, id, func(tx store.Tx) error {
		for _, inv := range []*store.InvocationRecord{
			{JobID: id, ID: statemachine.OccurrenceID(hr(8)), Occurrence: hr(8), Status: "SUCCEEDED", Attempt: 1, Created: hr(8), Ended: hr(8)},
			{JobID: id, ID: statemachine.OccurrenceID(hr(7)), Occurrence: hr(7), Status: "SKIPPED", Reason: "overrun", Count: 1, Last: hr(7), Created: hr(7), Ended: hr(7)},
		} {
			if err := tx.PutInvocation(inv); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := h.eng.Backfill(h.ctx, id, hr(5), hr(13), "user:alice@example.com"); err != nil {
		t.Fatal(err)
	}
	h.runUntil(hr(11).Add(time.Minute))
	if err := h.eng.Backfill(h.ctx, id, hr(5), hr(13), "user:alice@example.com"); err != nil {
		t.Fatal(err)
	}
	h.runUntil(hr(11).Add(2 * time.Minute))

	got := map[string]*store.InvocationRecord{}
	for _, inv := range h.invocations(id) {
		got[inv.ID] = inv
	}
	for n, want := range map[int]struct {
		status   string
		backfill bool
	}{5: {"SUCCEEDED", true}, 6: {"SUCCEEDED", true}, 7: {"SKIPPED", false}, 8: {"SUCCEEDED", false},
		9: {"SUCCEEDED", true}, 10: {"SUCCEEDED", true}, 11: {"SUCCEEDED", false}} {
		oid := statemachine.OccurrenceID(hr(n))
		inv := got[oid]
		if inv == nil || inv.Status != want.status || inv.Backfill != want.backfill {
			t.Errorf("%02d:00: record %+v, want status %s, backfill %v", n, inv, want.status, want.backfill)
		}
		launches := 0
		if want.status == "SUCCEEDED" && (want.backfill || n == 11) {
			launches = 1
		}
		if c := h.tgt.count(id+"/"+oid, 1); c != launches {
			t.Errorf("%02d:00 launched %d times, want %d", n, c, launches)
		}
	}
	if len(got) != 7 {
		t.Errorf("%d records, want 7: %v", len(got), got)
	}
}

// TestBackfill_RefusesARangePastRetention: a range that starts before the
// job's retention age is refused with ErrBackfillTooOld, and changes
// nothing; an empty range is refused too.
func TestBackfill_RefusesARangePastRetention(t *testing.T) {
	h := newHarness(t, engine.Options{Retention: engine.Retention{Age: 24 * time.Hour}})
	const id = "p/job"
	h.define(id, "0 * * * *", statemachine.Policy{}, "rec")
	before := h.job(id).EncodedState
	err := h.eng.Backfill(h.ctx, id, t0.Add(-25*time.Hour), t0, "user:alice@example.com")
	if !errors.Is(err, engine.ErrBackfillTooOld) {
		t.Fatalf("Backfill past retention: %v, want ErrBackfillTooOld", err)
	}
	if err := h.eng.Backfill(h.ctx, id, t0, t0.Add(-time.Hour), "user:alice@example.com"); !errors.Is(err, statemachine.ErrRefused) {
		t.Fatalf("Backfill of an empty range: %v, want ErrRefused", err)
	}
	if after := h.job(id).EncodedState; string(after) != string(before) {
		t.Errorf("a refused backfill changed the job:\n%s\n%s", before, after)
	}
	if err := h.eng.Backfill(h.ctx, id, t0.Add(-23*time.Hour), t0, "user:alice@example.com"); err != nil {
		t.Errorf("Backfill within retention: %v", err)
	}
}

// TestBackfill_WalksAFullyRecordedYearWithoutALiveTick: on SQLite, a
// backfill over a year of an hourly job whose occurrences all have
// records but one is walked to its end in steps of BackfillScan
// occurrences, each going on by a tick due now, well before the job's
// next live tick: the one occurrence without a record runs once, marked
// as backfill, nothing else runs, and the job's next tick is still the
// schedule's.
func TestBackfill_WalksAFullyRecordedYearWithoutALiveTick(t *testing.T) {
	cfg := statemachine.DefaultConfig
	cfg.BackfillScan = 500
	h := newHarness(t, engine.Options{Config: cfg, Retention: engine.Retention{Age: 400 * 24 * time.Hour, FailureAge: 400 * 24 * time.Hour}})
	const id = "p/job"
	h.define(id, "0 * * * *", statemachine.Policy{}, "rec")
	from := t0.Add(-365 * 24 * time.Hour)
	hole := from.Add(200*24*time.Hour + 5*time.Hour)
	n := 0
	if _, err := h.st.Update(h.ctx, id, func(tx store.Tx) error {
		n = 0
		for at := from; at.Before(t0); at = at.Add(time.Hour) {
			if at.Equal(hole) {
				continue
			}
			n++
			if err := tx.PutInvocation(&store.InvocationRecord{JobID: id, ID: statemachine.OccurrenceID(at), Occurrence: at,
				Status: "SUCCEEDED", Attempt: 1, Created: at, Ended: at}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := h.eng.Backfill(h.ctx, id, from, t0, "user:alice@example.com"); err != nil {
		t.Fatal(err)
	}
	h.runUntil(t0.Add(10 * time.Minute))

	v, err := h.eng.View(h.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if b := v.State.Backfill; b != nil {
		t.Fatalf("the backfill is still under way at %s, next at %s; the job's next tick is at %s", h.clock(), b.Next, v.State.TickAt)
	}
	if next, ok := v.NextFire(); !ok || !next.Equal(t0.Add(time.Hour)) {
		t.Errorf("the job's next occurrence is %s (%v), want %s", next, ok, t0.Add(time.Hour))
	}
	oid := statemachine.OccurrenceID(hole)
	inv, err := h.st.Invocation(h.ctx, id, oid)
	if err != nil || inv.Status != "SUCCEEDED" || !inv.Backfill {
		t.Errorf("the occurrence without a record: %+v, %v; want it SUCCEEDED by the backfill", inv, err)
	}
	if launches, _ := h.tgt.total(); launches != 1 || h.tgt.count(id+"/"+oid, 1) != 1 {
		t.Errorf("%d launches, %d of %s; want only that one, once", launches, h.tgt.count(id+"/"+oid, 1), oid)
	}
	if got := len(h.invocations(id)); got != n+1 {
		t.Errorf("%d records, want the %d there were and the backfilled one", got, n)
	}
}
