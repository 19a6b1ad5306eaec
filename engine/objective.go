package engine

import (
	"time"

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
