package forecast_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/forecast"
	"github.com/sundial-cron/sundial/statemachine"
)

func def(expr string) engine.Definition {
	return engine.Definition{Schedule: expr, Target: "noop"}
}

func TestADiffOfAConfigWithItselfIsEmpty(t *testing.T) {
	for seed := range uint64(10) {
		r := rand.New(rand.NewPCG(seed, 7))
		var jobs []engine.Job
		for i := range 1 + r.IntN(300) {
			d := def(exprs[r.IntN(len(exprs))])
			d.TimeZone = zones[r.IntN(len(zones))]
			jobs = append(jobs, engine.Job{ID: fmt.Sprintf("p/j%d", i), Definition: d})
		}
		d := forecast.Compare(jobs, slices.Clone(jobs), forecast.Options{Start: start, Herd: 1})
		if d.Changes() != 0 || d.Warnings() != 0 || d.BeforeLaunches != d.AfterLaunches {
			t.Errorf("seed %d: a config against itself: %d changes, %d herd seconds, %d launches before and %d after",
				seed, d.Changes(), d.Warnings(), d.BeforeLaunches, d.AfterLaunches)
		}
	}
}

func TestADiffNamesWhatEachJobGainsAndLoses(t *testing.T) {
	jitter := def("0 6 * * *")
	jitter.Policy = statemachine.Policy{Jitter: time.Minute}
	old := []engine.Job{
		{ID: "p/kept", Definition: def("0 3 * * *")},
		{ID: "p/moved", Definition: def("0 4 * * *")},
		{ID: "p/gone", Definition: def("0 5 * * 1")},
		{ID: "p/quiet", Definition: def("0 6 * * *")},
		{ID: "p/was-disabled", Definition: def("0 7 * * *"), Disabled: true},
	}
	now := []engine.Job{
		{ID: "p/kept", Definition: def("0 3 * * *")},
		{ID: "p/moved", Definition: def("30 4 * * *")},
		{ID: "p/new", Definition: def("0 12 * * 6")},
		{ID: "p/quiet", Definition: jitter},
		{ID: "p/was-disabled", Definition: def("0 7 * * *")},
	}
	d := forecast.Compare(old, now, forecast.Options{Start: start})
	var got []string
	for _, j := range d.Jobs {
		got = append(got, fmt.Sprintf("%s %s %v gone %d come %d", j.ID, j.Change, j.Fields, j.GoneCount, j.ComeCount))
	}
	want := []string{
		"p/gone removed [] gone 1 come 0",
		"p/moved changed [{schedule 0 4 * * * 30 4 * * *}] gone 7 come 7",
		"p/new added [] gone 0 come 1",
		"p/quiet changed [{jitter  1m0s}] gone 7 come 7",
		"p/was-disabled added [] gone 0 come 7",
	}
	if !slices.Equal(got, want) {
		t.Errorf("the diff:\n%q\nwant\n%q", got, want)
	}
	if d.Warnings() != 0 {
		t.Errorf("%d herd seconds from a change of five jobs", d.Warnings())
	}
}

func TestAChangeThatPilesJobsOntoOneSecondIsAHerdWithTheHThatSpreadsIt(t *testing.T) {
	var old, now []engine.Job
	for i := range 150 {
		id := fmt.Sprintf("p/report-%03d", i)
		old = append(old, engine.Job{ID: id, Definition: def("H 0 * * *")})
		now = append(now, engine.Job{ID: id, Definition: def("0 0 * * *")})
	}
	d := forecast.Compare(old, now, forecast.Options{Start: start})
	if d.HerdSeconds != 1 || len(d.Herds) != 1 {
		t.Fatalf("%d herd seconds (%v); want midnight's alone", d.HerdSeconds, d.Herds)
	}
	h := d.Herds[0]
	// A few of the hashed jobs fired at midnight already: the change
	// brings the others.
	if !h.At.Equal(start) || h.After != 150 || h.Before > 5 || h.JobCount != 150-h.Before || len(h.Jobs) != forecast.MaxListed {
		t.Errorf("herd %+v; want 150 launches at %s, brought by the jobs that did not launch then, %d named", h, start, forecast.MaxListed)
	}
	if s := h.Jobs[0]; s.ID != "p/report-000" || s.Suggest != "H 0 * * *" {
		t.Errorf("the first job of the herd: %+v; want p/report-000 and the suggestion H 0 * * *", s)
	}
	if d.AfterPeak != 150 || !d.AfterPeakAt.Equal(start) || d.BeforePeak >= 150 {
		t.Errorf("peaks: %d before, %d at %s after", d.BeforePeak, d.AfterPeak, d.AfterPeakAt)
	}
	// The same jobs, as they were, are no herd the change makes.
	if back := forecast.Compare(now, now, forecast.Options{Start: start}); back.Warnings() != 0 {
		t.Errorf("a herd the config already had is warned of again: %d seconds", back.Warnings())
	}
	if under := forecast.Compare(old, now, forecast.Options{Start: start, Herd: 150}); under.Warnings() != 0 {
		t.Errorf("150 launches in a second warned of with a threshold of 150")
	}
}
