package slo

import (
	"time"
)

// Kind names an objective in metrics and alerts.
type Kind string

// The kinds of objective.
const (
	KindLateness Kind = "lateness"
	KindSuccess  Kind = "success"
)

// Record is what one invocation record tells the objectives; the console
// makes them from the store's records.
type Record struct {
	// Due is when the occurrence was due: its scheduled time plus jitter.
	Due time.Time
	// Started is the current attempt's launch, of attempt Attempt; zero
	// before the first.
	Started time.Time
	Attempt int
	// Ended is when it ended; zero while it has not.
	Ended  time.Time
	Status string // as the store writes it: SUCCEEDED, FAILED, ABORTED, SKIPPED, ...
	Reason string // SKIPPED: why
	// Count is how many occurrences a SKIPPED record stands for.
	Count int
	// Manual and Backfill occurrences have no schedule to be late for.
	Manual, Backfill bool
}

// Judgement is how one record counts against an objective: Total events,
// of which Good were good; zero Total when it does not count (yet).
type Judgement struct{ Good, Total int }

// Late judges a record against a lateness objective. A launch counts
// once, by its first attempt; an occurrence skipped because it was found
// too late (missed, or superseded by a later one that catch-up ran) counts
// as late, as does one not launched by its deadline; skips the job asked
// for (overrun, calendars, a pause) do not count. A record of a later
// attempt launched after the deadline does not count: its first launch,
// which may have been on time, is not kept.
func Late(o Objective, r Record, now time.Time) Judgement {
	if o.Lateness <= 0 || r.Manual || r.Backfill {
		return Judgement{}
	}
	deadline := r.Due.Add(o.Lateness)
	switch {
	case r.Status == "SKIPPED":
		if r.Reason == "missed" || r.Reason == "superseded" {
			return Judgement{Total: max(r.Count, 1)}
		}
		return Judgement{}
	case r.Status == "ABORTED" && r.Started.IsZero():
		return Judgement{}
	case r.Started.IsZero():
		if end := r.Ended; !end.IsZero() && end.After(deadline) || end.IsZero() && now.After(deadline) {
			return Judgement{Total: 1}
		}
		return Judgement{}
	case r.Attempt <= 1 || !r.Started.After(deadline):
		// A later attempt launched in time had its first launched in time.
		return OnTime(o, r.Started.Sub(r.Due))
	}
	return Judgement{}
}

// OnTime judges one first launch, lateness after it was due.
func OnTime(o Objective, lateness time.Duration) Judgement {
	if lateness <= o.Lateness {
		return Judgement{Good: 1, Total: 1}
	}
	return Judgement{Total: 1}
}

// Succeeded judges a record against a success objective: an invocation
// that ended succeeded or failed counts; one aborted (someone decided),
// skipped, or not ended does not.
func Succeeded(o Objective, status string) Judgement {
	if o.Success <= 0 {
		return Judgement{}
	}
	switch status {
	case "SUCCEEDED":
		return Judgement{Good: 1, Total: 1}
	case "FAILED":
		return Judgement{Total: 1}
	}
	return Judgement{}
}

// Attainment is how an objective fared over its window.
type Attainment struct {
	Kind   Kind
	Target float64
	Judgement
}

// Ratio is the fraction of good events; 1 with none.
func (a Attainment) Ratio() float64 {
	if a.Total == 0 {
		return 1
	}
	return float64(a.Good) / float64(a.Total)
}

// Met reports whether the ratio reaches the target.
func (a Attainment) Met() bool { return a.Ratio() >= a.Target }

// Budget is the fraction of the error budget left: 1 with no bad event,
// 0 when the bad events are exactly the budget, below 0 past it.
func (a Attainment) Budget() float64 {
	if a.Total == 0 {
		return 1
	}
	allowed := (1 - a.Target) * float64(a.Total)
	return 1 - float64(a.Total-a.Good)/allowed
}

// Report is a job's objectives judged over their window.
type Report struct {
	Objective Objective
	// From is the start of the window: records of occurrences before it
	// are not judged.
	From time.Time
	// Attainments holds one per objective the job has, lateness first.
	Attainments []Attainment
}

// Evaluate judges records, in any order, against o at now: those of
// occurrences due within the window ending at now.
func Evaluate(o Objective, records []Record, now time.Time) Report {
	rep := Report{Objective: o, From: now.Add(-o.Window)}
	if !o.Set() {
		return rep
	}
	late, ok := Attainment{Kind: KindLateness, Target: o.OnTime}, Attainment{Kind: KindSuccess, Target: o.Success}
	for _, r := range records {
		if r.Due.Before(rep.From) || r.Due.After(now) {
			continue
		}
		late.Judgement = late.add(Late(o, r, now))
		ok.Judgement = ok.add(Succeeded(o, r.Status))
	}
	if o.Lateness > 0 {
		rep.Attainments = append(rep.Attainments, late)
	}
	if o.Success > 0 {
		rep.Attainments = append(rep.Attainments, ok)
	}
	return rep
}

func (a Attainment) add(j Judgement) Judgement {
	return Judgement{Good: a.Good + j.Good, Total: a.Total + j.Total}
}
