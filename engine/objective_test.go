package engine_test

import (
	"sync"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/slo"
	"github.com/sundial-cron/sundial/statemachine"
)

// judged sums what the engine told of each job's objectives.
type judged struct {
	endCounter
	mu  sync.Mutex
	sum map[string]map[slo.Kind]slo.Judgement
	// targets are the targets told, by kind.
	targets map[slo.Kind]float64
}

func newJudged() *judged {
	return &judged{endCounter: endCounter{ends: map[string][]statemachine.Status{}},
		sum: map[string]map[slo.Kind]slo.Judgement{}, targets: map[slo.Kind]float64{}}
}

func (j *judged) Judged(jobID string, kind slo.Kind, target float64, got slo.Judgement) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.sum[jobID] == nil {
		j.sum[jobID] = map[slo.Kind]slo.Judgement{}
	}
	s := j.sum[jobID][kind]
	j.sum[jobID][kind] = slo.Judgement{Good: s.Good + got.Good, Total: s.Total + got.Total}
	j.targets[kind] = target
}

func (j *judged) of(jobID string, kind slo.Kind) slo.Judgement {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.sum[jobID][kind]
}

// Each first launch counts against the lateness objective, each end
// against the success objective, and occurrences found too late (missed
// while the server was down) as late; a job without objectives, or one
// that opts out of the server's, counts nothing.
func TestObjectivesCountLaunchesEndsAndMissedOccurrences(t *testing.T) {
	obs := newJudged()
	server := slo.Objective{Success: 0.9}
	h := newHarness(t, engine.Options{Observer: obs, Objective: server})
	own := slo.Objective{Lateness: 30 * time.Second, OnTime: 0.995, Success: 0.99}
	for id, o := range map[string]slo.Objective{"p/own": own, "p/server": {}, "p/none": {None: true}} {
		def := engine.Definition{Schedule: "* * * * *", Target: "rec", Objective: o, Policy: statemachine.Policy{CatchupWindow: time.Minute}}
		if err := h.eng.Define(h.ctx, id, def); err != nil {
			t.Fatal(err)
		}
	}
	h.runUntil(t0.Add(3*time.Minute + time.Second))
	h.tgt.mu.Lock()
	h.tgt.fail = true
	h.tgt.mu.Unlock()
	h.runUntil(t0.Add(5*time.Minute + time.Second))

	if got, want := obs.of("p/own", slo.KindLateness), (slo.Judgement{Good: 5, Total: 5}); got != want {
		t.Errorf("p/own lateness %+v, want %+v: five launches on time", got, want)
	}
	if got, want := obs.of("p/own", slo.KindSuccess), (slo.Judgement{Good: 3, Total: 5}); got != want {
		t.Errorf("p/own success %+v, want %+v: three succeeded, two failed", got, want)
	}
	if obs.targets[slo.KindLateness] != 0.995 {
		t.Errorf("lateness target told %v, want the job's 0.995", obs.targets[slo.KindLateness])
	}
	if got, want := obs.of("p/server", slo.KindSuccess), (slo.Judgement{Good: 3, Total: 5}); got != want {
		t.Errorf("p/server success %+v, want %+v: the server's objective applies", got, want)
	}
	if got := obs.of("p/server", slo.KindLateness); got != (slo.Judgement{}) {
		t.Errorf("p/server lateness %+v, want nothing: the server sets no lateness objective", got)
	}
	if got := obs.of("p/none", slo.KindSuccess); got != (slo.Judgement{}) {
		t.Errorf("p/none success %+v, want nothing: it opted out", got)
	}

	// The server is down for ten minutes: the ticks come late, past the
	// catch-up window, and what they find counts late.
	h.tgt.mu.Lock()
	h.tgt.fail = false
	h.tgt.mu.Unlock()
	h.set(t0.Add(15 * time.Minute))
	h.runUntil(t0.Add(15*time.Minute + time.Second))
	// 10:06 to 10:14 are found too late (missed, or run late by
	// catch-up): nine late; 10:15 launches on time.
	if got, want := obs.of("p/own", slo.KindLateness), (slo.Judgement{Good: 6, Total: 15}); got != want {
		t.Errorf("after ten minutes down, p/own lateness %+v, want %+v: the nine occurrences the server was down for counted late", got, want)
	}
}
