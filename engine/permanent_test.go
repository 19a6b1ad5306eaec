package engine_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/watchdog"
)

// corrupt writes the job as fn changes it, behind the engine's back, as a
// release that wrote another format, or a damaged store, would leave it:
// from the bytes the file holds, without the engine's memo of its state.
func (h *harness) corrupt(id string, fn func(j *store.JobRecord)) {
	h.t.Helper()
	j, err := h.st.Job(h.ctx, id)
	if err != nil {
		h.t.Fatal(err)
	}
	fn(j)
	if _, err := h.st.Update(h.ctx, id, func(tx store.Tx) error { return tx.PutJob(j) }); err != nil {
		h.t.Fatal(err)
	}
}

// A permanent error in a job's stored data must not be retried for ever:
// the task handler drops the task, the job ends DISABLED with the typed
// reason, its unfinished invocation ends, nothing of it is left queued,
// the watchdog finds nothing to repair, and a new definition brings the
// job back.
func TestAPermanentErrorDisablesTheJobAndDropsItsTask(t *testing.T) {
	def := engine.Definition{Schedule: "*/5 * * * *", Target: "rec"}
	for _, tc := range []struct {
		name   string
		kind   statemachine.ReasonKind
		damage func(j *store.JobRecord)
	}{
		{"corrupt stored state bytes", statemachine.ReasonStateUnreadable,
			func(j *store.JobRecord) { j.EncodedState = []byte(`{"v":1,"state":`) }},
		{"an undecodable stored definition", statemachine.ReasonDefinitionUnreadable,
			func(j *store.JobRecord) { j.Definition = []byte(`{"schedule":5}`) }},
		{"a schedule whose time zone left the tz database", statemachine.ReasonScheduleInvalid,
			func(j *store.JobRecord) {
				j.Definition = []byte(`{"schedule":"*/5 * * * *","time_zone":"Mars/Olympus","policy":{},"target":"rec"}`)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, engine.Options{})
			if err := h.eng.Define(h.ctx, "p/job", def); err != nil {
				t.Fatal(err)
			}
			// A triggered invocation, QUEUED, that the break leaves unfinished.
			if _, err := h.eng.Trigger(h.ctx, "p/job", "user:tester@example.com"); err != nil {
				t.Fatal(err)
			}
			tick := task.Task{Kind: task.TickLater, JobID: "p/job", Nonce: h.state("p/job").TickNonce}
			h.corrupt("p/job", tc.damage)

			h.set(t0.Add(5 * time.Minute))
			if err := h.eng.HandleTask(h.ctx, tick); err != nil {
				t.Fatalf("the handler returned %v; want nil, the task dropped", err)
			}
			j := h.job("p/job")
			m := h.state("p/job")
			if j.State != string(statemachine.Disabled) || m.Reason.Kind != tc.kind || m.Reason.Note == "" || !j.WatchdogTimerTs.IsZero() {
				t.Fatalf("after the task the job is %s (%s: %q), watchdog timer %v; want DISABLED (%s, with the error), no timer",
					j.State, m.Reason.Kind, m.Reason.Note, j.WatchdogTimerTs, tc.kind)
			}
			if inv := h.invocation("p/job", "manual-1"); inv.Status != string(statemachine.StatusAborted) {
				t.Errorf("the unfinished invocation is %s (%q), want ABORTED", inv.Status, inv.Message)
			}
			// The copies still queued are stale now, and dropped.
			h.runUntil(t0.Add(20 * time.Minute))
			if tasks, err := h.st.Tasks(h.ctx, 100); err != nil || len(tasks) != 0 {
				t.Errorf("tasks left: %v (%v); want none", tasks, err)
			}
			if got := h.job("p/job"); got.State != string(statemachine.Disabled) {
				t.Errorf("after its tasks ran out the job is %s, want DISABLED", got.State)
			}
			wd := watchdog.New(h.st, h.eng, watchdog.Options{Now: h.clock})
			if r, err := wd.Pass(h.ctx); err != nil || r != (watchdog.Result{}) {
				t.Errorf("a watchdog pass did %+v (%v); want nothing", r, err)
			}
			if _, err := h.eng.Trigger(h.ctx, "p/job", "user:tester@example.com"); !errors.Is(err, statemachine.ErrRefused) {
				t.Errorf("a trigger of the disabled job: %v, want refused", err)
			}

			def.Schedule = "*/10 * * * *"
			if err := h.eng.Define(h.ctx, "p/job", def); err != nil {
				t.Fatal(err)
			}
			if m := h.state("p/job"); m.State != statemachine.Scheduled || m.Reason != (statemachine.Reason{}) {
				t.Errorf("a new definition left the job %s (%s), want SCHEDULED", m.State, m.Reason)
			}
			// The trigger count survived even a state that was lost.
			if id, err := h.eng.Trigger(h.ctx, "p/job", "user:tester@example.com"); err != nil || id != "manual-2" {
				t.Errorf("the next trigger: %q, %v; want manual-2", id, err)
			}
			def.Schedule = "*/5 * * * *"
		})
	}
}

// The watchdog meets a broken job before any task does (the job waits for
// a task that was lost): its repair disables the job, and the next pass
// leaves it alone.
func TestTheWatchdogDisablesAJobWhoseScheduleNoLongerParses(t *testing.T) {
	h := newHarness(t, engine.Options{})
	h.define("p/job", "*/5 * * * *", statemachine.Policy{}, "rec")
	h.corrupt("p/job", func(j *store.JobRecord) {
		j.Definition = []byte(`{"schedule":"*/5 * * * *","time_zone":"Mars/Olympus","policy":{},"target":"rec"}`)
	})
	h.set(t0.Add(time.Hour))
	if ok, err := h.eng.Repair(h.ctx, "p/job"); err != nil || !ok {
		t.Fatalf("Repair = %v, %v; want the job disabled", ok, err)
	}
	if m := h.state("p/job"); m.State != statemachine.Disabled || m.Reason.Kind != statemachine.ReasonScheduleInvalid {
		t.Errorf("after Repair the job is %s (%s), want DISABLED (schedule_invalid)", m.State, m.Reason)
	}
	if r, err := h.wd.Pass(h.ctx); err != nil || r != (watchdog.Result{}) {
		t.Errorf("the next pass did %+v (%v); want nothing", r, err)
	}
}

// A state written by a newer release is not corrupt: during a rolling
// upgrade or after a rollback, a process of that release reads it.
// Disabling the job would overwrite it; the task is delivered again.
func TestAStateOfANewerReleaseIsRetriedNotDisabled(t *testing.T) {
	h := newHarness(t, engine.Options{})
	h.define("p/job", "*/5 * * * *", statemachine.Policy{}, "rec")
	newer := []byte(`{"v":99,"what":"a later format"}`)
	h.corrupt("p/job", func(j *store.JobRecord) { j.EncodedState = newer })
	err := h.eng.HandleTask(h.ctx, task.Task{Kind: task.TickLater, JobID: "p/job", Nonce: 1})
	if err == nil {
		t.Fatal("the handler dropped the task of a job it cannot read")
	}
	if j := h.job("p/job"); string(j.EncodedState) != string(newer) {
		t.Errorf("the newer state was overwritten: %s", j.EncodedState)
	}
}

// A transient failure of a job's task is retried, and visible meanwhile:
// the job's Health counts the failures in a row and keeps the last error,
// until a delivery of its task succeeds.
func TestATransientFailureIsCountedInTheJobsHealthUntilASuccess(t *testing.T) {
	h := newHarness(t, engine.Options{})
	crashed := false
	h.tgt.crash = func(targets.Request) bool {
		if crashed {
			return false
		}
		crashed = true
		return true
	}
	h.define("p/job", "*/5 * * * *", statemachine.Policy{}, "rec")
	if _, err := h.eng.Trigger(h.ctx, "p/job", "user:tester@example.com"); err != nil {
		t.Fatal(err)
	}
	a := h.state("p/job").Active[0]
	start := task.Task{Kind: task.StartInvocation, JobID: "p/job", Nonce: a.Nonce, Invocation: a.ID, Attempt: a.Attempt}
	health := func() engine.Health {
		t.Helper()
		v, err := h.eng.View(h.ctx, "p/job")
		if err != nil {
			t.Fatal(err)
		}
		return v.Health
	}
	// The launch's process dies after the call: not the job's trouble.
	ctx, end := inProcess(h.ctx)
	defer end()
	if err := h.eng.HandleTask(ctx, start); err == nil {
		t.Fatal("the interrupted handler returned nil")
	}
	if got := health(); got != (engine.Health{}) {
		t.Errorf("after an interrupted launch the health is %+v, want zero", got)
	}

	// Redelivered, the launch is resolved by asking the target, which
	// cannot answer.
	down := errors.New("the target's API is down")
	h.tgt.mu.Lock()
	h.tgt.resolveErr = down
	h.tgt.mu.Unlock()
	for i := 1; i <= 2; i++ {
		h.set(t0.Add(time.Duration(i) * time.Minute))
		if err := h.eng.HandleTask(h.ctx, start); !errors.Is(err, down) {
			t.Fatalf("delivery %d: %v, want the target's error, so the task comes again", i, err)
		}
		got := health()
		if got.TaskFailures != i || !strings.Contains(got.LastError, down.Error()) || !got.LastErrorAt.Equal(h.clock()) {
			t.Errorf("after %d failed deliveries the health is %+v", i, got)
		}
	}
	if m := h.state("p/job"); m.State == statemachine.Disabled {
		t.Errorf("a transient failure disabled the job (%s)", m.Reason)
	}

	h.tgt.mu.Lock()
	h.tgt.resolveErr = nil
	h.tgt.mu.Unlock()
	h.set(t0.Add(3 * time.Minute))
	if err := h.eng.HandleTask(h.ctx, start); err != nil {
		t.Fatal(err)
	}
	if got := health(); got != (engine.Health{}) {
		t.Errorf("after a successful delivery the health is %+v, want zero", got)
	}
	if inv := h.invocation("p/job", a.ID); inv.Status != string(statemachine.StatusSucceeded) {
		t.Errorf("the invocation is %s, want SUCCEEDED", inv.Status)
	}
}
