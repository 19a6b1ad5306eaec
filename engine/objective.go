package engine

import (
	"context"
	"time"

	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/slo"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// judge tells an ObjectiveObserver how what a transaction committed counts
// against the job's objectives: each invocation that ended, and each
// occurrence skipped because it was found too late.
func (e *Engine) judge(jobID string, c committed) {
	o, ok := e.opts.Observer.(ObjectiveObserver)
	if !ok || !c.objective.Set() {
		return
	}
	obj := c.objective
	for _, a := range c.acts {
		switch a := a.(type) {
		case statemachine.Record:
			if a.Status.Ended() {
				tell(o, jobID, slo.KindSuccess, obj.Success, slo.Succeeded(obj, string(a.Status)))
			}
		case statemachine.RecordSkipped:
			// Late reads a skip by its reason and count alone.
			r := slo.Record{Status: string(statemachine.StatusSkipped), Reason: string(a.Reason), Count: a.Count}
			tell(o, jobID, slo.KindLateness, obj.OnTime, slo.Late(obj, r, time.Time{}))
		}
	}
}

// judgeLaunch tells an ObjectiveObserver how an attempt launched lateness
// after it was due counts against the job's lateness objective: a first
// attempt of a scheduled occurrence counts, retries and manual or
// backfilled occurrences do not (slo.Late). inv is the record the
// launching step wrote, which tells them apart; the step always hands it
// over, and without it nothing is told.
func (e *Engine) judgeLaunch(jobID string, attempt int, inv *store.InvocationRecord, def *Definition, lateness time.Duration) {
	o, ok := e.opts.Observer.(ObjectiveObserver)
	if !ok || attempt != 1 || inv == nil || inv.Manual || inv.Backfill {
		return
	}
	obj := e.Objective(def)
	if obj.Set() && obj.Lateness > 0 {
		tell(o, jobID, slo.KindLateness, obj.OnTime, slo.OnTime(obj, lateness))
	}
}

func tell(o ObjectiveObserver, jobID string, kind slo.Kind, target float64, j slo.Judgement) {
	if j.Total > 0 {
		o.Judged(jobID, kind, target, j)
	}
}

// Objective is the objectives a job with definition def has: its own, or
// the server's defaults when its config says nothing of them.
func (e *Engine) Objective(def *Definition) slo.Objective {
	return def.Objective.Fill(e.opts.Objective)
}

// JudgeCap bounds the records read to judge one job's objectives:
// retention keeps 1,000 of each kind by default, and a job that keeps
// more is judged on its newest (Judged.Truncated).
const JudgeCap = 10_000

// Judged is a job's objectives judged from the history the store keeps.
type Judged struct {
	slo.Report
	// Defaults: the job's config says nothing of objectives, and these
	// are the server's.
	Defaults  bool
	Records   int  // the records judged
	Truncated bool // the window holds more than JudgeCap records: the newest were judged
}

// Judge reads the job's history over its objectives' window, newest
// first, and judges it (slo.Evaluate); ok is false for a job without
// objectives. The console and the API show what it says.
func (e *Engine) Judge(ctx context.Context, view View, now time.Time) (j Judged, ok bool, err error) {
	o := e.Objective(&view.Definition)
	if !o.Set() {
		return Judged{}, false, nil
	}
	var recs []slo.Record
	f := store.InvocationFilter{JobID: view.Job.ID, Since: now.Add(-o.Window)}
	for pg := (store.Page{Limit: store.MaxLimit}); ; {
		invs, next, err := e.store.ProjectInvocations(ctx, jobid.Split(view.Job.ID).Project, f, pg)
		if err != nil {
			return Judged{}, false, err
		}
		for _, inv := range invs {
			recs = append(recs, sloRecord(view, inv))
		}
		if next == "" || len(invs) == 0 {
			break
		}
		if len(recs) >= JudgeCap {
			j.Truncated = true
			break
		}
		pg.Cursor = next
	}
	j.Report = slo.Evaluate(o, recs, now)
	j.Defaults = view.Definition.Objective == (slo.Objective{})
	j.Records = len(recs)
	return j, true, nil
}

// sloRecord is what an invocation record tells the objectives. It is due
// at its occurrence plus the job's jitter, which is no lateness.
func sloRecord(view View, inv *store.InvocationRecord) slo.Record {
	return slo.Record{
		Due:     inv.Occurrence.Add(statemachine.Jitter(view.Job.ID, inv.Occurrence, view.Definition.Policy.Jitter)),
		Started: inv.Started, Attempt: inv.Attempt, Ended: inv.Ended,
		Status: inv.Status, Reason: inv.Reason, Count: inv.Count, Manual: inv.Manual, Backfill: inv.Backfill,
	}
}
