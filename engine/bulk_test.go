package engine_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
)

// cancelOnPause calls cancel when a committed transaction leaves a job
// PAUSED: the server stopping in the middle of a bulk pause.
type cancelOnPause struct {
	cancelOnDisable
	cancel func()
}

func (c cancelOnPause) Settled(_ string, s statemachine.JobState) {
	if s.State == statemachine.Paused {
		c.cancel()
	}
}

// TestABulkPauseStoppedHalfWayIsFinishedByRepeatingIt: each job is paused
// in its own transaction; a request that stops after the first leaves the
// rest as they were, and the same request again pauses them, leaving the
// first with its one audit entry.
func TestABulkPauseStoppedHalfWayIsFinishedByRepeatingIt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := newHarness(t, engine.Options{Observer: cancelOnPause{cancel: cancel}})
	var ids []string
	for i := range 5 {
		ids = append(ids, fmt.Sprintf("p/j%d", i))
		h.define(ids[i], "*/5 * * * *", statemachine.Policy{}, "rec")
	}
	res, err := h.eng.PauseJobs(ctx, "p", engine.Selection{}, "user:oncall@example.com", "incident 7", time.Time{})
	if err == nil || !slices.Equal(res.Changed, ids[:1]) {
		t.Fatalf("the stopped request: %+v, %v; want p/j0 paused and an error", res, err)
	}
	for _, id := range ids[1:] {
		if got := h.job(id).State; got != string(statemachine.Scheduled) {
			t.Errorf("%s is %s after the stop; want SCHEDULED", id, got)
		}
	}
	res, err = h.eng.PauseJobs(context.Background(), "p", engine.Selection{}, "user:oncall@example.com", "incident 7", time.Time{})
	if err != nil || !slices.Equal(res.Changed, ids[1:]) || !slices.Equal(res.Unchanged, ids[:1]) {
		t.Fatalf("the repeat: %+v, %v; want the other four paused and p/j0 unchanged", res, err)
	}
	for _, id := range ids {
		v, err := h.eng.View(h.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if v.State.State != statemachine.Paused || len(v.Audit) != 1 || v.Audit[0].Reason != "incident 7" {
			t.Errorf("%s: %s with audit %+v; want PAUSED with one pause for incident 7", id, v.State.State, v.Audit)
		}
	}
}

// TestABulkResumeForAReasonNoJobHasListsTheReasonsItSaw: a resume of the
// jobs paused for a reason none has resumes nothing and tells the
// reasons the paused jobs it picked otherwise have, with how many; a bulk
// pause never replaces a paused job's reason.
func TestABulkResumeForAReasonNoJobHasListsTheReasonsItSaw(t *testing.T) {
	h := newHarness(t, engine.Options{})
	for i, reason := range []string{"incident 7", "incident 7", "migration", ""} {
		id := fmt.Sprintf("p/j%d", i)
		h.define(id, "*/5 * * * *", statemachine.Policy{}, "rec")
		if reason != "" {
			if err := h.eng.Pause(h.ctx, id, alice, reason); err != nil {
				t.Fatal(err)
			}
		}
	}
	if res, err := h.eng.PauseJobs(h.ctx, "p", engine.Selection{Prefix: "j2"}, bob, "incident 8", time.Time{}); err != nil || len(res.Changed) != 0 {
		t.Errorf("a bulk pause of the job paused for migration = %+v, %v; want it unchanged", res, err)
	}
	res, err := h.eng.ResumeJobs(h.ctx, "p", engine.Selection{State: statemachine.Paused, PausedFor: "incident 8"}, bob)
	if want := map[string]int{"incident 7": 2, "migration": 1}; err != nil || len(res.Changed) != 0 || !reflect.DeepEqual(res.OtherReasons, want) {
		t.Errorf("resume of the jobs paused for incident 8 = %+v, %v; want nothing resumed and other reasons %v", res, err, want)
	}
}
