package slo

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

var both = Objective{Lateness: 30 * time.Second, OnTime: 0.99, Success: 0.9, Window: 7 * 24 * time.Hour}

func TestLate(t *testing.T) {
	now := at(0)
	due := at(-time.Hour)
	for _, c := range []struct {
		name string
		r    Record
		want Judgement
	}{
		{"a first launch within the lateness is good", Record{Due: due, Started: due.Add(30 * time.Second), Attempt: 1, Status: "SUCCEEDED"}, Judgement{1, 1}},
		{"a first launch past the lateness is bad", Record{Due: due, Started: due.Add(31 * time.Second), Attempt: 1, Status: "RUNNING"}, Judgement{0, 1}},
		{"a launch early (a clock ahead) is good", Record{Due: due, Started: due.Add(-time.Second), Attempt: 1, Status: "SUCCEEDED"}, Judgement{1, 1}},
		{"a later attempt launched before the deadline had its first on time", Record{Due: due, Started: due.Add(20 * time.Second), Attempt: 2, Status: "RUNNING"}, Judgement{1, 1}},
		{"a later attempt launched after the deadline does not count", Record{Due: due, Started: due.Add(time.Minute), Attempt: 2, Status: "FAILED"}, Judgement{}},
		{"a missed occurrence counts late, each it stands for", Record{Due: due, Status: "SKIPPED", Reason: "missed", Count: 3}, Judgement{0, 3}},
		{"a superseded occurrence counts late", Record{Due: due, Status: "SKIPPED", Reason: "superseded", Count: 1}, Judgement{0, 1}},
		{"an overrun does not count", Record{Due: due, Status: "SKIPPED", Reason: "overrun", Count: 1}, Judgement{}},
		{"a calendar's skip does not count", Record{Due: due, Status: "SKIPPED", Reason: "calendar", Count: 1}, Judgement{}},
		{"queued past its deadline counts late before it launches", Record{Due: due, Status: "QUEUED"}, Judgement{0, 1}},
		{"queued within its deadline does not count yet", Record{Due: now.Add(-10 * time.Second), Status: "QUEUED"}, Judgement{}},
		{"failed before any launch, after the deadline, is late", Record{Due: due, Status: "FAILED", Ended: due.Add(time.Hour)}, Judgement{0, 1}},
		{"aborted before any launch does not count", Record{Due: due, Status: "ABORTED", Ended: due.Add(time.Hour)}, Judgement{}},
		{"a manual trigger has no schedule to be late for", Record{Due: due, Started: due.Add(time.Hour), Attempt: 1, Manual: true}, Judgement{}},
		{"a backfilled occurrence neither", Record{Due: due, Started: due.Add(time.Hour), Attempt: 1, Backfill: true}, Judgement{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Late(both, c.r, now); got != c.want {
				t.Errorf("Late = %+v, want %+v", got, c.want)
			}
		})
	}
	if got := Late(Objective{Success: 0.9}, Record{Due: due, Status: "SKIPPED", Reason: "missed"}, now); got != (Judgement{}) {
		t.Errorf("without a lateness objective: %+v, want nothing", got)
	}
}

func TestSucceeded(t *testing.T) {
	for status, want := range map[string]Judgement{
		"SUCCEEDED": {1, 1}, "FAILED": {0, 1}, "ABORTED": {}, "SKIPPED": {}, "RUNNING": {}, "QUEUED": {}, "RETRYING": {},
	} {
		if got := Succeeded(both, status); got != want {
			t.Errorf("%s: %+v, want %+v", status, got, want)
		}
	}
	if got := Succeeded(Objective{Lateness: time.Second}, "FAILED"); got != (Judgement{}) {
		t.Errorf("without a success objective: %+v, want nothing", got)
	}
}

func TestEvaluateKeepsToTheWindow(t *testing.T) {
	o := both
	o.Window = 24 * time.Hour
	recs := []Record{
		{Due: at(-25 * time.Hour), Status: "FAILED", Started: at(-25 * time.Hour), Attempt: 1},
		{Due: at(-2 * time.Hour), Status: "FAILED", Started: at(-2 * time.Hour).Add(time.Minute), Attempt: 1},
		{Due: at(-time.Hour), Status: "SUCCEEDED", Started: at(-time.Hour), Attempt: 1},
		{Due: at(time.Hour), Status: "QUEUED"},
	}
	rep := Evaluate(o, recs, at(0))
	if len(rep.Attainments) != 2 {
		t.Fatalf("attainments %+v, want lateness and success", rep.Attainments)
	}
	late, ok := rep.Attainments[0], rep.Attainments[1]
	if late.Kind != KindLateness || late.Judgement != (Judgement{1, 2}) {
		t.Errorf("lateness %+v, want 1 of 2 on time", late)
	}
	if ok.Kind != KindSuccess || ok.Judgement != (Judgement{1, 2}) {
		t.Errorf("success %+v, want 1 of 2 succeeded", ok)
	}
	if !rep.From.Equal(at(-24 * time.Hour)) {
		t.Errorf("from %v, want a day before now", rep.From)
	}
}

func TestEvaluateWithoutObjectives(t *testing.T) {
	recs := []Record{{Due: at(-time.Hour), Status: "FAILED"}}
	for _, o := range []Objective{{}, {None: true, Success: 0.9}} {
		if rep := Evaluate(o, recs, at(0)); len(rep.Attainments) != 0 {
			t.Errorf("%+v: %+v, want no attainment", o, rep.Attainments)
		}
	}
}

func TestBudget(t *testing.T) {
	for _, c := range []struct {
		name        string
		good, total int
		target      float64
		want        float64
		met         bool
	}{
		{"no event leaves the whole budget", 0, 0, 0.99, 1, true},
		{"no bad event leaves it whole", 100, 100, 0.99, 1, true},
		{"half the allowed bad events leaves half", 995, 1000, 0.99, 0.5, true},
		{"exactly the allowed bad events leaves none", 990, 1000, 0.99, 0, true},
		{"twice the allowed is a budget spent twice", 980, 1000, 0.99, -1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := Attainment{Target: c.target, Judgement: Judgement{c.good, c.total}}
			if got := a.Budget(); math.Abs(got-c.want) > 1e-9 {
				t.Errorf("Budget = %v, want %v", got, c.want)
			}
			if a.Met() != c.met {
				t.Errorf("Met = %v, want %v", a.Met(), c.met)
			}
		})
	}
}

// TestEvaluateCountsEachRecordOnce: over random histories, every record
// in the window counts at most once per objective (a skip as many times
// as it stands for), none outside does, and the budget is spent exactly
// when the ratio falls below the target.
func TestEvaluateCountsEachRecordOnce(t *testing.T) {
	statuses := []string{"SUCCEEDED", "FAILED", "ABORTED", "SKIPPED", "QUEUED", "RUNNING", "RETRYING"}
	reasons := []string{"missed", "superseded", "overrun", "calendar", "paused"}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		var recs []Record
		var inWindow, counted int
		o := both
		o.Window = time.Duration(1+rng.IntN(7)) * 24 * time.Hour
		for range rng.IntN(50) {
			r := Record{Due: at(-time.Duration(rng.Int64N(int64(8 * 24 * time.Hour)))), Status: statuses[rng.IntN(len(statuses))],
				Attempt: rng.IntN(3), Manual: rng.IntN(10) == 0}
			if r.Attempt > 0 {
				r.Started = r.Due.Add(time.Duration(rng.Int64N(int64(2 * time.Minute))))
			}
			if r.Status == "SKIPPED" {
				r.Reason, r.Count, r.Started, r.Attempt = reasons[rng.IntN(len(reasons))], 1+rng.IntN(4), time.Time{}, 0
			}
			recs = append(recs, r)
			if !r.Due.Before(at(-o.Window)) {
				inWindow += max(r.Count, 1)
				if r.Status == "SUCCEEDED" || r.Status == "FAILED" {
					counted++
				}
			}
		}
		rep := Evaluate(o, recs, at(0))
		late, ok := rep.Attainments[0], rep.Attainments[1]
		if late.Total > inWindow || late.Good > late.Total {
			t.Fatalf("history %d: lateness %+v of %d occurrences in the window", i, late, inWindow)
		}
		if ok.Total != counted {
			t.Fatalf("history %d: success counted %d, want the %d ended records that succeeded or failed", i, ok.Total, counted)
		}
		for _, a := range rep.Attainments {
			if (a.Budget() >= 0) != a.Met() && math.Abs(a.Budget()) > 1e-9 {
				t.Fatalf("history %d: %s budget %v but met %v", i, a.Kind, a.Budget(), a.Met())
			}
		}
	}
}
