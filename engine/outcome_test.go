package engine_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
)

// TestATriggerTellsWhatTheOverlapPolicyMadeOfIt: a second trigger while
// the first is unfinished runs beside it (allow), waits (queue_one), is
// skipped as an overrun (skip), or aborts the first (replace), and the
// outcome says which.
func TestATriggerTellsWhatTheOverlapPolicyMadeOfIt(t *testing.T) {
	h := newHarness(t, engine.Options{})
	for _, tt := range []struct {
		overlap statemachine.Overlap
		want    engine.Outcome
	}{
		{statemachine.OverlapAllow, engine.Outcome{Changed: true, Invocation: "manual-2"}},
		{statemachine.OverlapQueueOne, engine.Outcome{Changed: true, Invocation: "manual-2", Waiting: true}},
		{statemachine.OverlapSkip, engine.Outcome{Changed: true, Invocation: "manual-2", Skipped: statemachine.SkipOverrun}},
		{statemachine.OverlapReplace, engine.Outcome{Changed: true, Invocation: "manual-2", Aborted: []engine.Aborted{{Invocation: "manual-1", Attempt: 1}}}},
	} {
		job := "p/" + string(tt.overlap)
		h.define(job, "@every 1h", statemachine.Policy{Overlap: tt.overlap, MaxConcurrent: 2}, "rec")
		if o, err := h.eng.TriggerJob(h.ctx, job, alice); err != nil || !reflect.DeepEqual(o, engine.Outcome{Changed: true, Invocation: "manual-1"}) {
			t.Fatalf("%s: first trigger = %+v, %v; want manual-1 queued", job, o, err)
		}
		o, err := h.eng.TriggerJob(h.ctx, job, alice)
		if err != nil || !reflect.DeepEqual(o, tt.want) {
			t.Errorf("%s: second trigger = %+v, %v; want %+v", job, o, err, tt.want)
		}
	}
}

// TestRequestsTellWhetherTheyChangedTheJob: a pause with a new reason
// replaces the old one and says which; one with the same reason, a
// resume of a job not paused and an abort with nothing unfinished change
// nothing and say so; an abort names what it ended and on which attempt.
func TestRequestsTellWhetherTheyChangedTheJob(t *testing.T) {
	h := newHarness(t, engine.Options{})
	h.define("p/job", "@every 1h", statemachine.Policy{}, "rec")
	steps := []struct {
		name string
		do   func() (engine.Outcome, error)
		want engine.Outcome
	}{
		{"resume of a scheduled job", func() (engine.Outcome, error) { return h.eng.ResumeJob(h.ctx, "p/job", alice) }, engine.Outcome{}},
		{"abort with nothing unfinished", func() (engine.Outcome, error) { return h.eng.AbortJob(h.ctx, "p/job", "", alice) }, engine.Outcome{}},
		{"trigger", func() (engine.Outcome, error) { return h.eng.TriggerJob(h.ctx, "p/job", alice) }, engine.Outcome{Changed: true, Invocation: "manual-1"}},
		{"abort of the trigger", func() (engine.Outcome, error) { return h.eng.AbortJob(h.ctx, "p/job", "", alice) },
			engine.Outcome{Changed: true, Aborted: []engine.Aborted{{Invocation: "manual-1", Attempt: 1}}}},
		{"pause", func() (engine.Outcome, error) { return h.eng.PauseJob(h.ctx, "p/job", alice, "migration", time.Time{}) }, engine.Outcome{Changed: true}},
		{"pause with the same reason", func() (engine.Outcome, error) { return h.eng.PauseJob(h.ctx, "p/job", bob, "migration", time.Time{}) }, engine.Outcome{}},
		{"pause with a new reason", func() (engine.Outcome, error) {
			return h.eng.PauseJob(h.ctx, "p/job", bob, "migration, until 14:00", time.Time{})
		},
			engine.Outcome{Changed: true, Renoted: "migration"}},
		{"resume", func() (engine.Outcome, error) { return h.eng.ResumeJob(h.ctx, "p/job", alice) }, engine.Outcome{Changed: true}},
	}
	for _, s := range steps {
		o, err := s.do()
		if err != nil || !reflect.DeepEqual(o, s.want) {
			t.Errorf("%s = %+v, %v; want %+v", s.name, o, err, s.want)
		}
	}
}
