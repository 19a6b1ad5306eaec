package engine_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/engine/enginetest"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/task"
)

// snapshot is everything of the harness's store a request could change.
type snapshot struct {
	jobs  []*store.JobRecord
	tasks []task.Task
	invs  map[string][]*store.InvocationRecord
}

func (h *harness) snapshot(jobIDs ...string) snapshot {
	h.t.Helper()
	s := snapshot{invs: map[string][]*store.InvocationRecord{}}
	jobs, _, err := h.st.Jobs(h.ctx, "", store.Page{Limit: 1000})
	if err != nil {
		h.t.Fatal(err)
	}
	s.jobs = jobs
	if s.tasks, err = h.st.Tasks(h.ctx, 1000); err != nil {
		h.t.Fatal(err)
	}
	for _, id := range jobIDs {
		s.invs[id] = h.invocations(id)
	}
	return s
}

func (h *harness) unchanged(before snapshot, what string, jobIDs ...string) {
	h.t.Helper()
	after := h.snapshot(jobIDs...)
	if !reflect.DeepEqual(after.jobs, before.jobs) {
		h.t.Errorf("%s changed the jobs:\n%s\nwant\n%s", what, describeJobs(after.jobs), describeJobs(before.jobs))
	}
	if !reflect.DeepEqual(after.tasks, before.tasks) {
		h.t.Errorf("%s changed the tasks:\n%v\nwant\n%v", what, after.tasks, before.tasks)
	}
	if !reflect.DeepEqual(after.invs, before.invs) {
		h.t.Errorf("%s changed the invocations", what)
	}
}

func describeJobs(jobs []*store.JobRecord) string {
	var b strings.Builder
	for _, j := range jobs {
		b.WriteString(j.ID + " " + j.State + " " + j.WatchdogTimerTs.String() + " " + string(j.EncodedState) + "\n")
	}
	return b.String()
}

func (h *harness) state(id string) statemachine.JobState {
	h.t.Helper()
	m, err := engine.State(h.job(id))
	if err != nil {
		h.t.Fatal(err)
	}
	return m
}

func (h *harness) invocation(jobID, id string) *store.InvocationRecord {
	h.t.Helper()
	inv, err := h.st.Invocation(h.ctx, jobID, id)
	if err != nil {
		h.t.Fatalf("invocation %s/%s: %v", jobID, id, err)
	}
	return inv
}

func TestDefineRefusesWhatItCannotRunAndChangesNothing(t *testing.T) {
	good := engine.Definition{Schedule: "*/5 * * * *", Target: "rec"}
	for _, tc := range []struct {
		name    string
		jobID   string
		def     engine.Definition
		wantErr string
	}{
		{"a job id without a project", "nojob", good, "want <project>/<job>"},
		{"a job id with an empty project", "/job", good, "want <project>/<job>"},
		{"a job id with an empty job", "p/", good, "want <project>/<job>"},
		{"an unknown target", "p/job", engine.Definition{Schedule: "* * * * *", Target: "teleport"}, `unknown target "teleport"`},
		{"no target", "p/job", engine.Definition{Schedule: "* * * * *"}, `unknown target ""`},
		{"a bad schedule", "p/job", engine.Definition{Schedule: "every tuesday-ish", Target: "rec"}, "p/job"},
		{"a schedule out of range", "p/job", engine.Definition{Schedule: "61 * * * *", Target: "rec"}, "p/job"},
		{"an unknown time zone", "p/job", engine.Definition{Schedule: "* * * * *", TimeZone: "Mars/Olympus_Mons", Target: "rec"}, "Mars/Olympus_Mons"},
		{"an unknown DST gap policy", "p/job", engine.Definition{Schedule: "* * * * *", Gap: "leap", Target: "rec"}, "leap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Run("a new job", func(t *testing.T) {
				h := newHarness(t, engine.Options{})
				before := h.snapshot()
				err := h.eng.Define(h.ctx, tc.jobID, tc.def)
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Define(%q) = %v; want an error containing %q", tc.jobID, err, tc.wantErr)
				}
				if _, err := h.st.Job(h.ctx, tc.jobID); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("after the refused Define, reading the job: %v; want no job", err)
				}
				h.unchanged(before, "the refused Define")
			})
			if !strings.Contains(tc.jobID, "/") || strings.HasPrefix(tc.jobID, "/") || strings.HasSuffix(tc.jobID, "/") {
				return // a bad id names no job that could exist
			}
			t.Run("an existing job", func(t *testing.T) {
				h := newHarness(t, engine.Options{})
				h.define(tc.jobID, good.Schedule, good.Policy, good.Target)
				before := h.snapshot(tc.jobID)
				if err := h.eng.Define(h.ctx, tc.jobID, tc.def); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Define(%q) = %v; want an error containing %q", tc.jobID, err, tc.wantErr)
				}
				h.unchanged(before, "the refused Define", tc.jobID)
			})
		})
	}
}

func TestDefineTheSameDefinitionAgainIsANoOp(t *testing.T) {
	h := newHarness(t, engine.Options{})
	def := engine.Definition{Schedule: "*/5 * * * *", Target: "rec", Spec: []byte(`{"a":1}`)}
	if err := h.eng.Define(h.ctx, "p/job", def); err != nil {
		t.Fatal(err)
	}
	h.runUntil(t0.Add(7 * time.Minute)) // one run, and the clock has moved on
	before := h.snapshot("p/job")
	if err := h.eng.Define(h.ctx, "p/job", def); err != nil {
		t.Fatal(err)
	}
	h.unchanged(before, "Define of the same definition", "p/job")

	// The snapshot would see a change: a different definition makes one.
	def.Schedule = "*/10 * * * *"
	if err := h.eng.Define(h.ctx, "p/job", def); err != nil {
		t.Fatal(err)
	}
	if after := h.snapshot("p/job"); reflect.DeepEqual(after.jobs, before.jobs) {
		t.Errorf("Define of a new schedule left the job as it was")
	}
}

// A definition stored by an older release is spelled otherwise: a policy
// field it did not know is absent, and its spec's keys come in another
// order. Define compares by value, so an upgrade that adds a field changes
// no job whose config did not change.
func TestDefineComparesDefinitionsByValueNotByTheirBytes(t *testing.T) {
	h := newHarness(t, engine.Options{})
	def := engine.Definition{Schedule: "*/5 * * * *", Target: "rec", Spec: []byte(`{"a":1,"b":[2,3]}`)}
	if err := h.eng.Define(h.ctx, "p/job", def); err != nil {
		t.Fatal(err)
	}
	h.runUntil(t0.Add(7 * time.Minute))
	older := []byte(`{"schedule":"*/5 * * * *","policy":{"Overlap":""},"target":"rec","spec":{ "b": [2, 3], "a": 1 }}`)
	h.corrupt("p/job", func(j *store.JobRecord) { j.Definition = older })
	before := h.snapshot("p/job")
	if err := h.eng.Define(h.ctx, "p/job", def); err != nil {
		t.Fatal(err)
	}
	h.unchanged(before, "Define of the same definition, stored in an older spelling", "p/job")
}

// The config's disable and an auto-disable differ in what listing the job
// again does: the first is undone, the second stays until the definition
// changes.
func TestDefineEnablesAJobDisabledByItsConfigButNotAnAutoDisabledOne(t *testing.T) {
	h := newHarness(t, engine.Options{})
	def := engine.Definition{Schedule: "*/5 * * * *", Target: "rec"}
	for _, id := range []string{"p/removed", "p/auto"} {
		if err := h.eng.Define(h.ctx, id, def); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.eng.Disable(h.ctx, "p/removed", statemachine.Reason{Kind: statemachine.ReasonRemovedFromConfig}); err != nil {
		t.Fatal(err)
	}
	if err := h.eng.Disable(h.ctx, "p/auto", statemachine.Reason{Kind: statemachine.ReasonAutoDisabled, Note: "after 3 failed invocations in a row"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"p/removed", "p/auto"} {
		if err := h.eng.Define(h.ctx, id, def); err != nil {
			t.Fatal(err)
		}
	}
	if j := h.job("p/removed"); j.State != string(statemachine.Scheduled) {
		t.Errorf("a job removed from config and listed again is %s, want SCHEDULED", j.State)
	}
	if j := h.job("p/auto"); j.State != string(statemachine.Disabled) {
		t.Errorf("an auto-disabled job whose definition did not change is %s, want DISABLED", j.State)
	}
	def.Schedule = "*/10 * * * *"
	if err := h.eng.Define(h.ctx, "p/auto", def); err != nil {
		t.Fatal(err)
	}
	if j := h.job("p/auto"); j.State != string(statemachine.Scheduled) {
		t.Errorf("an auto-disabled job given a new definition is %s, want SCHEDULED", j.State)
	}
}

func TestTriggerRecordsAManualInvocationAndRunsIt(t *testing.T) {
	h := newHarness(t, engine.Options{})
	h.define("p/job", "triggered", statemachine.Policy{}, "rec")

	id, err := h.eng.Trigger(h.ctx, "p/job", "user:tester@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if id != "manual-1" {
		t.Errorf("Trigger = %q, want manual-1", id)
	}
	invs := h.invocations("p/job")
	if len(invs) != 1 || invs[0].ID != id || !invs[0].Manual || invs[0].Status != string(statemachine.StatusQueued) {
		t.Fatalf("after Trigger the listing is %s; want %s QUEUED, manual", describeInvs(invs), id)
	}
	h.runUntil(t0.Add(time.Minute))
	if inv := h.invocation("p/job", id); inv.Status != string(statemachine.StatusSucceeded) || !inv.Manual {
		t.Errorf("%s is %s (manual %v); want SUCCEEDED, manual", id, inv.Status, inv.Manual)
	}
	if n := h.tgt.count("p/job/"+id, 1); n != 1 {
		t.Errorf("%s was launched %d times, want once", id, n)
	}

	id2, err := h.eng.Trigger(h.ctx, "p/job", "user:tester@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if id2 != "manual-2" {
		t.Errorf("the second Trigger = %q, want manual-2", id2)
	}
	h.runUntil(t0.Add(2 * time.Minute))
	invs = h.invocations("p/job")
	if len(invs) != 2 || invs[0].ID != id2 || !invs[0].Manual || invs[0].Status != string(statemachine.StatusSucceeded) {
		t.Errorf("after the second run the listing is %s; want %s first, SUCCEEDED, manual", describeInvs(invs), id2)
	}
}

func describeInvs(invs []*store.InvocationRecord) string {
	var b strings.Builder
	b.WriteString("[")
	for i, inv := range invs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(inv.ID + " " + inv.Status)
		if inv.Manual {
			b.WriteString(" manual")
		}
	}
	return b.String() + "]"
}

func TestPauseAndResume(t *testing.T) {
	h := newHarness(t, engine.Options{})
	h.define("p/job", "* * * * *", statemachine.Policy{}, "rec")
	h.runUntil(t0.Add(90 * time.Second))
	if n := len(h.invocations("p/job")); n != 1 {
		t.Fatalf("%d invocations before the pause, want 1", n)
	}

	if err := h.eng.Pause(h.ctx, "p/job", "user:tester@example.com", "maintenance"); err != nil {
		t.Fatal(err)
	}
	j := h.job("p/job")
	if m := h.state("p/job"); j.State != string(statemachine.Paused) || m.Reason != (statemachine.Reason{Kind: statemachine.ReasonPaused, Note: "maintenance"}) || !j.WatchdogTimerTs.IsZero() {
		t.Errorf("after Pause the job is %s (%q), watchdog timer %v; want PAUSED (maintenance), no timer", j.State, m.Reason, j.WatchdogTimerTs)
	}
	before := h.snapshot("p/job")
	if err := h.eng.Pause(h.ctx, "p/job", "user:tester@example.com", "maintenance"); err != nil {
		t.Errorf("Pause of a paused job: %v", err)
	}
	h.unchanged(before, "Pause of a paused job with its reason", "p/job")
	if err := h.eng.Pause(h.ctx, "p/job", "user:tester@example.com", "again"); err != nil {
		t.Errorf("Pause of a paused job: %v", err)
	}
	if m := h.state("p/job"); m.State != statemachine.Paused || m.Reason != (statemachine.Reason{Kind: statemachine.ReasonPaused, Note: "again"}) {
		t.Errorf("after a pause with another reason the job is %s (%q); want PAUSED (again)", m.State, m.Reason)
	}

	h.runUntil(t0.Add(5*time.Minute + 30*time.Second))
	for _, inv := range h.invocations("p/job") {
		if inv.Status != string(statemachine.StatusSkipped) && inv.Occurrence.After(t0.Add(90*time.Second)) {
			t.Errorf("%s (%s) ran while the job was paused", inv.ID, inv.Status)
		}
	}

	if err := h.eng.Resume(h.ctx, "p/job", "user:tester@example.com"); err != nil {
		t.Fatal(err)
	}
	if j := h.job("p/job"); j.State != string(statemachine.Scheduled) || j.WatchdogTimerTs.IsZero() {
		t.Errorf("after Resume the job is %s, watchdog timer %v; want SCHEDULED with a timer", j.State, j.WatchdogTimerTs)
	}
	before = h.snapshot("p/job")
	if err := h.eng.Resume(h.ctx, "p/job", "user:tester@example.com"); err != nil {
		t.Errorf("Resume of a running job: %v", err)
	}
	h.unchanged(before, "Resume of a job that is not paused", "p/job")

	h.runUntil(t0.Add(7*time.Minute + 30*time.Second))
	resumed := 0
	for _, inv := range h.invocations("p/job") {
		if inv.Status == string(statemachine.StatusSucceeded) && inv.Occurrence.After(t0.Add(5*time.Minute)) {
			resumed++
		}
	}
	if resumed != 2 {
		t.Errorf("%d runs after the resume, want 2 (06:00 and 07:00)", resumed)
	}
}

func TestAbortEndsAQueuedInvocationBeforeItLaunches(t *testing.T) {
	h := newHarness(t, engine.Options{})
	h.define("p/job", "triggered", statemachine.Policy{}, "rec")
	id, err := h.eng.Trigger(h.ctx, "p/job", "user:tester@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.eng.Abort(h.ctx, "p/job", id, "user:tester@example.com"); err != nil {
		t.Fatal(err)
	}
	if inv := h.invocation("p/job", id); inv.Status != string(statemachine.StatusAborted) || inv.Ended.IsZero() {
		t.Errorf("after Abort %s is %s, ended %v; want ABORTED and ended", id, inv.Status, inv.Ended)
	}
	if j := h.job("p/job"); j.State != string(statemachine.Scheduled) {
		t.Errorf("after Abort the job is %s, want SCHEDULED", j.State)
	}
	// Its StartInvocation is still queued; delivered, it does nothing.
	h.runUntil(t0.Add(time.Minute))
	if n := h.tgt.count("p/job/"+id, 1); n != 0 {
		t.Errorf("the aborted %s was launched %d times", id, n)
	}
	if inv := h.invocation("p/job", id); inv.Status != string(statemachine.StatusAborted) {
		t.Errorf("%s is %s after its task ran, want ABORTED", id, inv.Status)
	}

	// The job runs again after an abort.
	id2, err := h.eng.Trigger(h.ctx, "p/job", "user:tester@example.com")
	if err != nil {
		t.Fatal(err)
	}
	h.runUntil(t0.Add(2 * time.Minute))
	if inv := h.invocation("p/job", id2); inv.Status != string(statemachine.StatusSucceeded) {
		t.Errorf("%s after the abort is %s, want SUCCEEDED", id2, inv.Status)
	}
}

func TestAbortOfAnInvocationItCannotAbortIsRefusedAndChangesNothing(t *testing.T) {
	h := newHarness(t, engine.Options{})
	h.define("p/job", "* * * * *", statemachine.Policy{}, "rec")
	h.runUntil(t0.Add(90 * time.Second))
	ended := h.invocations("p/job")[0].ID
	for _, tc := range []struct{ name, invocation string }{
		{"an unknown invocation", "no-such-invocation"},
		{"an invocation that has ended", ended},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := h.snapshot("p/job")
			err := h.eng.Abort(h.ctx, "p/job", tc.invocation, "user:tester@example.com")
			if !errors.Is(err, statemachine.ErrRefused) {
				t.Errorf("Abort(%q) = %v; want an error wrapping %v", tc.invocation, err, statemachine.ErrRefused)
			}
			h.unchanged(before, "the refused Abort", "p/job")
		})
	}
	t.Run("an unknown job", func(t *testing.T) {
		before := h.snapshot("p/job")
		if err := h.eng.Abort(h.ctx, "p/nosuch", "x", "user:tester@example.com"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Abort of an unknown job = %v; want %v", err, store.ErrNotFound)
		}
		h.unchanged(before, "the Abort of an unknown job", "p/job")
	})
}

func TestDisableKeepsHistoryAndDefineEnablesAgain(t *testing.T) {
	h := newHarness(t, engine.Options{})
	def := engine.Definition{Schedule: "* * * * *", Target: "rec"}
	if err := h.eng.Define(h.ctx, "p/job", def); err != nil {
		t.Fatal(err)
	}
	h.runUntil(t0.Add(2*time.Minute + 30*time.Second))
	history := h.invocations("p/job")
	if len(history) != 2 {
		t.Fatalf("%d invocations before Disable, want 2", len(history))
	}

	if err := h.eng.Disable(h.ctx, "p/job", statemachine.Reason{Kind: statemachine.ReasonRemovedFromConfig}); err != nil {
		t.Fatal(err)
	}
	j := h.job("p/job")
	if m := h.state("p/job"); j.State != string(statemachine.Disabled) || m.Reason.Kind != statemachine.ReasonRemovedFromConfig || !j.WatchdogTimerTs.IsZero() {
		t.Errorf("after Disable the job is %s (%q), watchdog timer %v; want DISABLED (removed from config), no timer", j.State, m.Reason, j.WatchdogTimerTs)
	}
	if got := h.invocations("p/job"); !reflect.DeepEqual(got, history) {
		t.Errorf("Disable changed the history: %s, want %s", describeInvs(got), describeInvs(history))
	}
	before := h.snapshot("p/job")
	if _, err := h.eng.Trigger(h.ctx, "p/job", "user:tester@example.com"); !errors.Is(err, statemachine.ErrRefused) {
		t.Errorf("Trigger of a disabled job = %v; want an error wrapping %v", err, statemachine.ErrRefused)
	}
	h.unchanged(before, "the refused Trigger", "p/job")
	h.runUntil(t0.Add(5*time.Minute + 30*time.Second))
	if got := h.invocations("p/job"); !reflect.DeepEqual(got, history) {
		t.Errorf("the disabled job ran: %s, want %s", describeInvs(got), describeInvs(history))
	}

	// The same definition again enables it; what fell while it was
	// disabled is not run.
	if err := h.eng.Define(h.ctx, "p/job", def); err != nil {
		t.Fatal(err)
	}
	if j := h.job("p/job"); j.State != string(statemachine.Scheduled) || j.WatchdogTimerTs.IsZero() {
		t.Errorf("after Define the job is %s, watchdog timer %v; want SCHEDULED with a timer", j.State, j.WatchdogTimerTs)
	}
	h.runUntil(t0.Add(7*time.Minute + 30*time.Second))
	got := h.invocations("p/job")
	if len(got) != len(history)+2 || !reflect.DeepEqual(got[2:], history) {
		t.Fatalf("after Define the listing is %s; want two new runs over the history %s", describeInvs(got), describeInvs(history))
	}
	for _, inv := range got[:2] {
		if inv.Status != string(statemachine.StatusSucceeded) || !inv.Occurrence.After(t0.Add(5*time.Minute)) {
			t.Errorf("%s at %v is %s; want SUCCEEDED after the job was enabled", inv.ID, inv.Occurrence, inv.Status)
		}
	}
}

// A project's revision defines and disables only that project's jobs: a
// job of another project in it is refused, and the other project's jobs
// are left as they are.
func TestApplyProjectTouchesOnlyItsOwnProject(t *testing.T) {
	h := newHarness(t, engine.Options{})
	def := engine.Definition{Schedule: "*/5 * * * *", Target: "rec"}
	if err := h.eng.ApplyProject(h.ctx, "b", engine.Revision{ID: "r1", Jobs: []engine.Job{{ID: "b/keep", Definition: def}}}); err != nil {
		t.Fatal(err)
	}
	before := h.job("b/keep")
	err := h.eng.ApplyProject(h.ctx, "a", engine.Revision{ID: "r1", Jobs: []engine.Job{{ID: "a/mine", Definition: def}, {ID: "b/stolen", Definition: def}}})
	if err == nil || !strings.Contains(err.Error(), "b/stolen: not a job of project a") {
		t.Errorf("ApplyProject(a) with a job of b: %v; want it refused", err)
	}
	if _, err := h.st.Job(h.ctx, "b/stolen"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("b/stolen: %v; want it never created", err)
	}
	if j := h.job("a/mine"); j.State != string(statemachine.Scheduled) {
		t.Errorf("a/mine is %s; want the rest of the revision applied", j.State)
	}
	if after := h.job("b/keep"); !reflect.DeepEqual(after, before) {
		t.Errorf("b/keep after project a's revision:\n%+v\nwant\n%+v", after, before)
	}
}

// An apply cut short (the server stopping) goes no further: it defines
// and disables nothing more, and says so in one error instead of one per
// job left.
func TestApplyProjectStoppedGoesNoFurther(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The first job the revision disables stops the server.
	h := newHarness(t, engine.Options{Observer: cancelOnDisable{cancel}})
	def := engine.Definition{Schedule: "*/5 * * * *", Target: "rec"}
	listed := []engine.Job{{ID: "p/a", Definition: def}}
	var left []engine.Job
	for i := range 10 {
		listed = append(listed, engine.Job{ID: fmt.Sprintf("p/b%d", i), Definition: def})
		left = append(left, engine.Job{ID: fmt.Sprintf("p/x%d", i), Definition: def})
	}
	if err := h.eng.ApplyProject(h.ctx, "p", engine.Revision{ID: "r1", Jobs: append(slices.Clone(listed), left...)}); err != nil {
		t.Fatal(err)
	}
	before := map[string]*store.JobRecord{}
	for _, j := range append(slices.Clone(listed), left...) {
		before[j.ID] = h.job(j.ID)
	}
	listed[0].Disabled = true
	err := h.eng.ApplyProject(ctx, "p", engine.Revision{ID: "r1", Jobs: listed})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "stopped before the revision was applied whole") {
		t.Errorf("a stopped apply returned %q; want one line saying it stopped", err)
	}
	if got := h.job("p/a").State; got != string(statemachine.Disabled) {
		t.Errorf("p/a is %s; want DISABLED, as the revision says, before the stop", got)
	}
	for id, j := range before {
		if id != "p/a" && !reflect.DeepEqual(h.job(id), j) {
			t.Errorf("%s changed after the stop", id)
		}
	}
}

// cancelOnDisable calls cancel when a job is disabled.
type cancelOnDisable struct{ cancel func() }

func (cancelOnDisable) Launched(string, time.Duration)               {}
func (cancelOnDisable) Ended(string, statemachine.Status)            {}
func (cancelOnDisable) Skipped(string, statemachine.SkipReason, int) {}
func (cancelOnDisable) Repaired(string)                              {}
func (c cancelOnDisable) Disabled(string, statemachine.Reason)       { c.cancel() }
func (cancelOnDisable) TaskFailed(string, task.Kind, bool)           {}

// A revision's jobs are applied side by side, so that their transactions
// share commits: applied one after another, a project of 100,000 jobs
// waits for 100,000 commits. The store here holds every Update until a
// second one is under way; one at a time, the apply would never end.
func TestApplyProjectDefinesJobsSideBySide(t *testing.T) {
	h := newHarness(t, engine.Options{})
	met := make(chan struct{})
	st := &gateStore{Store: h.st, full: 2, open: met, reached: met} // open once two met
	eng := engine.New(st, &enginetest.LateQueue{Queue: h.disp}, map[string]targets.Target{"rec": h.tgt}, engine.Options{Now: h.clock})
	def := engine.Definition{Schedule: "*/5 * * * *", Target: "rec"}
	var jobs []engine.Job
	for i := range 8 {
		jobs = append(jobs, engine.Job{ID: fmt.Sprintf("p/j%d", i), Definition: def})
	}
	ctx, cancel := context.WithTimeout(h.ctx, 30*time.Second)
	defer cancel()
	if err := eng.ApplyProject(ctx, "p", engine.Revision{ID: "r1", Jobs: jobs}); err != nil {
		t.Fatalf("ApplyProject: %v (its jobs were applied one at a time)", err)
	}
	for _, j := range jobs {
		if got := h.job(j.ID).State; got != string(statemachine.Scheduled) {
			t.Errorf("%s is %s; want SCHEDULED", j.ID, got)
		}
	}
}

// TestApplyingIsBoundedAcrossRevisions: revisions applied at once, as the
// config refresher applies every project's at a start, define at most
// engine.ApplyWorkers jobs at a time between them, not that many each;
// and they do reach the bound, so that their transactions can share the
// store's batches.
func TestApplyingIsBoundedAcrossRevisions(t *testing.T) {
	h := newHarness(t, engine.Options{})
	st := &gateStore{Store: h.st, full: engine.ApplyWorkers, open: make(chan struct{}), reached: make(chan struct{})}
	eng := engine.New(st, &enginetest.LateQueue{Queue: h.disp}, map[string]targets.Target{"rec": h.tgt}, engine.Options{Now: h.clock})
	def := engine.Definition{Schedule: "*/5 * * * *", Target: "rec"}
	ctx, cancel := context.WithTimeout(h.ctx, time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for _, p := range []string{"p", "q"} {
		var jobs []engine.Job
		for i := range engine.ApplyWorkers {
			jobs = append(jobs, engine.Job{ID: fmt.Sprintf("%s/j%d", p, i), Definition: def})
		}
		wg.Go(func() {
			if err := eng.ApplyProject(ctx, p, engine.Revision{ID: "r1", Jobs: jobs}); err != nil {
				t.Errorf("ApplyProject %s: %v", p, err)
			}
		})
	}
	select {
	case <-st.reached:
	case <-ctx.Done():
		t.Fatalf("the two revisions never had %d jobs under way at once", engine.ApplyWorkers)
	}
	// With the bound per revision, the other revision's workers would be
	// under way already; give them a moment to show up.
	time.Sleep(100 * time.Millisecond)
	close(st.open)
	wg.Wait()
	if got := st.most(); got > engine.ApplyWorkers {
		t.Errorf("%d jobs applied at once; want at most %d", got, engine.ApplyWorkers)
	}
	if got := h.job("q/j0").State; got != string(statemachine.Scheduled) {
		t.Errorf("q/j0 is %s; want SCHEDULED", got)
	}
}

// TestApplyingKeepsDefinesInFlight: with a store.Submitter, each apply
// worker submits engine.ApplyDepth of its jobs' transactions before it
// waits for the first, so that a large config's definitions fill the
// store's commits without a goroutine each; and never more.
func TestApplyingKeepsDefinesInFlight(t *testing.T) {
	h := newHarness(t, engine.Options{})
	const inFlight = engine.ApplyWorkers * engine.ApplyDepth
	st := &submitGateStore{gateStore: gateStore{Store: h.st, full: inFlight, open: make(chan struct{}), reached: make(chan struct{})}, sub: h.st}
	eng := engine.New(st, &enginetest.LateQueue{Queue: h.disp}, map[string]targets.Target{"rec": h.tgt}, engine.Options{Now: h.clock})
	def := engine.Definition{Schedule: "*/5 * * * *", Target: "rec"}
	var jobs []engine.Job
	for i := range inFlight + engine.ApplyWorkers {
		jobs = append(jobs, engine.Job{ID: fmt.Sprintf("p/j%d", i), Definition: def})
	}
	ctx, cancel := context.WithTimeout(h.ctx, time.Minute)
	defer cancel()
	applied := make(chan error, 1)
	go func() { applied <- eng.ApplyProject(ctx, "p", engine.Revision{ID: "r1", Jobs: jobs}) }()
	select {
	case <-st.reached:
	case <-ctx.Done():
		t.Fatalf("never %d transactions in flight at once; at most %d: each worker waited for one before the next", inFlight, st.most())
	}
	// Had a worker gone on past its depth, more would be under way by now.
	time.Sleep(100 * time.Millisecond)
	close(st.open)
	if err := <-applied; err != nil {
		t.Fatalf("ApplyProject: %v", err)
	}
	if got := st.most(); got > inFlight {
		t.Errorf("%d transactions in flight at once; want at most %d", got, inFlight)
	}
	for _, j := range []engine.Job{jobs[0], jobs[len(jobs)-1]} {
		if got := h.job(j.ID).State; got != string(statemachine.Scheduled) {
			t.Errorf("%s is %s; want SCHEDULED", j.ID, got)
		}
	}
}

// TestApplyingGivesTheWorkersToOneProjectAtATime: two projects waiting
// to be applied while every worker is busy get the workers in turn, not
// shared: the jobs in flight are then consecutive ones of one project,
// which the store writes together (see pipelined).
func TestApplyingGivesTheWorkersToOneProjectAtATime(t *testing.T) {
	h := newHarness(t, engine.Options{})
	const inFlight = engine.ApplyWorkers * engine.ApplyDepth
	st := &orderStore{submitGateStore: submitGateStore{gateStore: gateStore{Store: h.st, full: inFlight, open: make(chan struct{}), reached: make(chan struct{})}, sub: h.st}}
	eng := engine.New(st, &enginetest.LateQueue{Queue: h.disp}, map[string]targets.Target{"rec": h.tgt}, engine.Options{Now: h.clock})
	def := engine.Definition{Schedule: "*/5 * * * *", Target: "rec"}
	revision := func(project string) engine.Revision {
		var jobs []engine.Job
		for i := range inFlight {
			jobs = append(jobs, engine.Job{ID: fmt.Sprintf("%s/j%04d", project, i), Definition: def})
		}
		return engine.Revision{ID: "r1", Jobs: jobs}
	}
	ctx, cancel := context.WithTimeout(h.ctx, time.Minute)
	defer cancel()
	applied := make(chan error, 3)
	apply := func(project string) {
		go func() { applied <- eng.ApplyProject(ctx, project, revision(project)) }()
	}
	// "a" holds every worker, its defines held at the gate.
	apply("a")
	select {
	case <-st.reached:
	case <-ctx.Done():
		t.Fatalf("a never had %d defines in flight; at most %d", inFlight, st.most())
	}
	apply("p")
	apply("q")
	// Both wait for workers before a's are free.
	time.Sleep(100 * time.Millisecond)
	close(st.open)
	for range 3 {
		if err := <-applied; err != nil {
			t.Fatalf("ApplyProject: %v", err)
		}
	}
	// Taken in turn, one project's defines come before the other's: the
	// mean positions of the two are about inFlight apart, where shared
	// they would be about the same. A worker of the first may be held up
	// between taking a job and submitting it; there are too few workers
	// for that to move a mean by more than 2 * ApplyWorkers.
	sum := map[string]int{}
	k := 0
	for _, id := range st.submitted() {
		if p := engine.ProjectOf(id); p != "a" {
			sum[p] += k
			k++
		}
	}
	if apart := (sum["p"] - sum["q"]) / inFlight; apart < inFlight/2 && -apart < inFlight/2 {
		t.Errorf("p's and q's defines were submitted on average %d apart; want about %d: the workers were shared", apart, inFlight)
	}
}

// TestApplyingDefinesJobsInTheOrderOfTheirIDs: a revision's jobs are
// defined in the store's order, whatever the config's, so that those in
// flight lie together (see pipelined).
func TestApplyingDefinesJobsInTheOrderOfTheirIDs(t *testing.T) {
	h := newHarness(t, engine.Options{})
	st := &orderStore{submitGateStore: submitGateStore{gateStore: gateStore{Store: h.st, open: make(chan struct{})}, sub: h.st}}
	close(st.open)
	eng := engine.New(st, h.disp, map[string]targets.Target{"rec": h.tgt}, engine.Options{Now: h.clock})
	def := engine.Definition{Schedule: "*/5 * * * *", Target: "rec"}
	const inFlight = engine.ApplyWorkers * engine.ApplyDepth
	const n = 4 * inFlight
	var jobs []engine.Job
	for i := n - 1; i >= 0; i-- {
		jobs = append(jobs, engine.Job{ID: fmt.Sprintf("p/j%05d", i), Definition: def})
	}
	if err := eng.ApplyProject(h.ctx, "p", engine.Revision{ID: "r1", Jobs: jobs}); err != nil {
		t.Fatal(err)
	}
	// The workers take the jobs in order, but a worker may be held up
	// between taking a job and submitting it: the jobs are judged by
	// quarters of their ids, each submitted on average after the one
	// before.
	var sum [4]int
	for k, id := range st.submitted() {
		var i int
		if _, err := fmt.Sscanf(id, "p/j%05d", &i); err != nil {
			t.Fatal(err)
		}
		sum[i*4/n] += k
	}
	for q := 1; q < 4; q++ {
		if sum[q] <= sum[q-1] {
			t.Fatalf("the ids' quarter %d was submitted on average at %d, quarter %d at %d; want in the order of the ids", q-1, sum[q-1]*4/n, q, sum[q]*4/n)
		}
	}
}

// orderStore records the jobs whose Updates are submitted, in order.
type orderStore struct {
	submitGateStore
	mu    sync.Mutex
	order []string
}

func (s *orderStore) Submit(ctx context.Context, jobID string, fn func(store.Tx) error) func() ([]task.Task, error) {
	s.mu.Lock()
	s.order = append(s.order, jobID)
	s.mu.Unlock()
	return s.submitGateStore.Submit(ctx, jobID, fn)
}

func (s *orderStore) submitted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.order)
}

// TestApplyingTheRevisionRunningCostsNoTransaction: applying again the
// revision a project runs, as every start does, or a new one that leaves
// its jobs as they are, opens no transaction for them; a job it changes,
// or one disabled by its config and listed again, still gets one.
func TestApplyingTheRevisionRunningCostsNoTransaction(t *testing.T) {
	h := newHarness(t, engine.Options{})
	st := &countingStore{Store: h.st}
	eng := engine.New(st, h.disp, map[string]targets.Target{"rec": h.tgt}, engine.Options{Now: h.clock})
	def := engine.Definition{Schedule: "*/5 * * * *", Target: "rec"}
	jobs := []engine.Job{{ID: "p/a", Definition: def}, {ID: "p/b", Definition: def}, {ID: "p/c", Definition: def, Disabled: true}}
	rev := "r1"
	apply := func() int {
		t.Helper()
		before := st.updates.Load()
		if err := eng.ApplyProject(h.ctx, "p", engine.Revision{ID: rev, Jobs: jobs}); err != nil {
			t.Fatal(err)
		}
		return int(st.updates.Load() - before)
	}
	jobs[2].Disabled = false
	apply()
	jobs[2].Disabled = true
	apply()
	jobs[2].Disabled = false
	if n := apply(); n != 1 {
		t.Errorf("the revision running again, with p/c listed again: %d transactions, want 1 (p/c's)", n)
	}
	if got := h.job("p/c").State; got != string(statemachine.Scheduled) {
		t.Errorf("p/c listed again is %s; want SCHEDULED", got)
	}
	if n := apply(); n != 0 {
		t.Errorf("the revision running again: %d transactions, want none", n)
	}
	rev = "r2"
	if n := apply(); n != 0 {
		t.Errorf("a new revision that changes none of the jobs: %d transactions, want none", n)
	}
	jobs[1].Definition.Schedule = "*/10 * * * *"
	if n := apply(); n != 1 {
		t.Errorf("one job changed: %d transactions, want 1", n)
	}
	if got := h.job("p/b").Definition; !strings.Contains(string(got), "*/10") {
		t.Errorf("p/b's stored definition %s, want the changed schedule", got)
	}
}

// TestApplyingARevisionMarksTheJobsItAdds: the jobs a revision adds, which
// the project's listing just found absent, are defined with store.NewJob,
// so the store need not read them again; the others are not.
func TestApplyingARevisionMarksTheJobsItAdds(t *testing.T) {
	h := newHarness(t, engine.Options{})
	st := &newJobStore{Store: h.st, marked: map[string]bool{}}
	eng := engine.New(st, h.disp, map[string]targets.Target{"rec": h.tgt}, engine.Options{Now: h.clock})
	def := engine.Definition{Schedule: "*/5 * * * *", Target: "rec"}
	if err := eng.ApplyProject(h.ctx, "p", engine.Revision{ID: "r1", Jobs: []engine.Job{{ID: "p/a", Definition: def}}}); err != nil {
		t.Fatal(err)
	}
	clear(st.marked)
	changed := def
	changed.Schedule = "*/10 * * * *"
	if err := eng.ApplyProject(h.ctx, "p", engine.Revision{ID: "r2", Jobs: []engine.Job{{ID: "p/a", Definition: changed}, {ID: "p/b", Definition: def}}}); err != nil {
		t.Fatal(err)
	}
	if want := map[string]bool{"p/a": false, "p/b": true}; !maps.Equal(st.marked, want) {
		t.Errorf("jobs with an Update marked NewJob: %v, want %v", st.marked, want)
	}
	if got := h.job("p/b").State; got != string(statemachine.Scheduled) {
		t.Errorf("p/b is %s; want SCHEDULED", got)
	}
}

// newJobStore notes, for each job, whether any of its Updates was marked
// NewJob.
type newJobStore struct {
	store.Store
	mu     sync.Mutex
	marked map[string]bool
}

func (s *newJobStore) Update(ctx context.Context, jobID string, fn func(store.Tx) error) ([]task.Task, error) {
	s.mu.Lock()
	s.marked[jobID] = s.marked[jobID] || store.IsNewJob(ctx)
	s.mu.Unlock()
	return s.Store.Update(ctx, jobID, fn)
}

// countingStore counts Updates.
type countingStore struct {
	store.Store
	updates atomic.Int64
}

func (s *countingStore) Update(ctx context.Context, jobID string, fn func(store.Tx) error) ([]task.Task, error) {
	s.updates.Add(1)
	return s.Store.Update(ctx, jobID, fn)
}

// gateStore holds every Update until open is closed, and closes reached
// once full of them are under way at once (only once: the highest count
// seen, most, only grows). open and reached may be one channel: the
// Updates are then held until full of them meet.
type gateStore struct {
	store.Store
	full    int
	open    chan struct{}
	reached chan struct{}

	mu      sync.Mutex
	running int
	peak    int
}

func (s *gateStore) Update(ctx context.Context, jobID string, fn func(store.Tx) error) ([]task.Task, error) {
	s.enter()
	defer s.leave()
	select {
	case <-s.open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.Store.Update(ctx, jobID, fn)
}

// enter counts an Update under way, and leave one that ended.
func (s *gateStore) enter() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running++
	if s.running > s.peak {
		s.peak = s.running
		if s.peak == s.full {
			close(s.reached)
		}
	}
}

func (s *gateStore) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
}

// submitGateStore is gateStore for a store.Submitter: a submitted
// transaction is under way from its Submit until its wait returns, and
// each wait is held until open is closed.
type submitGateStore struct {
	gateStore
	sub store.Submitter
}

func (s *submitGateStore) Submit(ctx context.Context, jobID string, fn func(store.Tx) error) func() ([]task.Task, error) {
	s.enter()
	return func() ([]task.Task, error) {
		defer s.leave()
		select {
		case <-s.open:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return s.sub.Submit(ctx, jobID, fn)()
	}
}

func (s *gateStore) most() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}
