package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/engine/enginetest"
	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/swarming"
	"github.com/sundial-cron/sundial/targets/swarming/swarmingtest"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/local"
	"github.com/sundial-cron/sundial/watchdog"
)

// asyncHarness is the embedded shape on a fake clock running swarming
// jobs against a stand-in Swarming: the end of an attempt comes by the
// engine's polls, or by Check as the push endpoint calls it.
type asyncHarness struct {
	t     *testing.T
	clk   *fakeclock.Clock
	st    *sqlite.Store
	eng   *engine.Engine
	disp  *local.Dispatcher
	wd    *watchdog.Watchdog
	swarm *swarmingtest.Server
	ends  *endCounter
}

// endCounter counts the ends the engine recorded, by job: what an end
// recorded twice would show.
type endCounter struct {
	mu   sync.Mutex
	ends map[string][]statemachine.Status
}

func (c *endCounter) Ended(jobID string, st statemachine.Status) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ends[jobID] = append(c.ends[jobID], st)
}

func (c *endCounter) of(jobID string) []statemachine.Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]statemachine.Status(nil), c.ends[jobID]...)
}

func (c *endCounter) Launched(string, time.Duration)               {}
func (c *endCounter) Skipped(string, statemachine.SkipReason, int) {}
func (c *endCounter) Repaired(string)                              {}
func (c *endCounter) Disabled(string, statemachine.Reason)         {}
func (c *endCounter) TaskFailed(string, task.Kind, bool)           {}

func newAsyncHarness(t *testing.T) *asyncHarness {
	t.Helper()
	h := &asyncHarness{t: t, clk: fakeclock.New(t0), swarm: swarmingtest.New(), ends: &endCounter{ends: map[string][]statemachine.Status{}}}
	t.Cleanup(h.swarm.Close)
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "sundial.db"), sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tgt, err := swarming.New(swarming.Options{Client: http.DefaultClient, Servers: []string{"http://127.0.0.1"}, Grants: []swarming.RealmGrant{{Project: "p", Realm: "acme", Any: true}}})
	if err != nil {
		t.Fatal(err)
	}
	q := &enginetest.LateQueue{}
	h.st = st
	h.eng = engine.New(st, q, map[string]targets.Target{"swarming": tgt}, engine.Options{Now: h.clk.Now, Observer: h.ends})
	h.disp = local.New(st, h.eng.HandleTask, local.Options{Owner: "proc-1", Workers: 4, OrphanAfter: 10 * time.Second, Now: h.clk.Now, Logger: slog.New(slog.DiscardHandler)})
	q.Queue = h.disp
	h.wd = watchdog.New(st, h.eng, watchdog.Options{Now: h.clk.Now})
	return h
}

func (h *asyncHarness) runUntil(until time.Time) {
	h.t.Helper()
	if err := enginetest.RunUntil(context.Background(), h.clk, h.st, h.disp, h.wd, until); err != nil {
		h.t.Fatal(err)
	}
}

// defineHourly defines p/<name>, a swarming job at minute 1 of every hour
// with the given timeout.
func (h *asyncHarness) defineHourly(name string, timeout time.Duration) string {
	h.t.Helper()
	id := "p/" + name
	spec := json.RawMessage(fmt.Sprintf(`{"server": %q, "realm": "acme:ci", "pool": "ci", "command": ["run"]}`, h.swarm.URL))
	if err := h.eng.Define(context.Background(), id, engine.Definition{Schedule: "1 * * * *", Target: "swarming", Spec: spec, Policy: statemachine.Policy{Timeout: timeout}}); err != nil {
		h.t.Fatal(err)
	}
	return id
}

// launched runs the job's first occurrence to RUNNING and returns its
// invocation id and its Swarming task on the stand-in.
func (h *asyncHarness) launched(id string) (string, swarmingtest.Task) {
	h.t.Helper()
	h.runUntil(t0.Add(time.Minute + time.Second))
	inv := statemachine.OccurrenceID(t0.Add(time.Minute))
	tasks := h.swarm.Tasks()
	if len(tasks) != 1 {
		h.t.Fatalf("the stand-in has %d Swarming tasks; want 1", len(tasks))
	}
	// The record says where the attempt runs while it runs.
	if r, err := h.st.Invocation(context.Background(), id, inv); err != nil || r.Status != string(statemachine.StatusRunning) || !strings.Contains(r.Message, tasks[0].ID) {
		h.t.Fatalf("invocation %s: %+v, %v; want RUNNING, naming Swarming task %s", inv, r, err, tasks[0].ID)
	}
	return inv, tasks[0]
}

func (h *asyncHarness) status(id, inv string) (statemachine.Status, string) {
	h.t.Helper()
	r, err := h.st.Invocation(context.Background(), id, inv)
	if err != nil {
		h.t.Fatal(err)
	}
	return statemachine.Status(r.Status), r.Message
}

func TestAsync_ALostPushIsCaughtByAPoll(t *testing.T) {
	t.Parallel()
	h := newAsyncHarness(t)
	id := h.defineHourly("job", time.Hour)
	inv, task := h.launched(id)
	if err := h.swarm.Start(task.ID); err != nil {
		t.Fatal(err)
	}
	// Polls before the end find it running.
	h.runUntil(t0.Add(4 * time.Minute))
	if st, _ := h.status(id, inv); st != statemachine.StatusRunning {
		t.Fatalf("before the end: %s; want RUNNING", st)
	}
	if err := h.swarm.Finish(task.ID, "COMPLETED", 0); err != nil { // no push: none is configured
		t.Fatal(err)
	}
	// The next poll, at most MaxPoll later, finds the end.
	h.runUntil(t0.Add(15 * time.Minute))
	if st, msg := h.status(id, inv); st != statemachine.StatusSucceeded || !strings.Contains(msg, "COMPLETED, exit code 0") {
		t.Fatalf("after the end: %s %q; want SUCCEEDED saying COMPLETED", st, msg)
	}
	if calls := h.swarm.Calls("ListTasks"); calls > 8 {
		t.Errorf("%d polls in 14 minutes; want the waits to back off from 1 toward 10 minutes", calls)
	}
}

func TestAsync_AnEndPushedAndPolledAtOnceIsRecordedOnce(t *testing.T) {
	t.Parallel()
	for round := range 5 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			t.Parallel()
			h := newAsyncHarness(t)
			id := h.defineHourly("job", time.Hour)
			inv, task := h.launched(id)
			if err := h.swarm.Finish(task.ID, "COMPLETED", 2); err != nil {
				t.Fatal(err)
			}
			// Pushes (Check, as the endpoint calls it) race the poll task
			// the dispatcher runs.
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					if err := h.eng.Check(context.Background(), id, inv, 1); err != nil {
						t.Errorf("Check = %v", err)
					}
				})
			}
			wg.Go(func() { h.runUntil(t0.Add(3 * time.Minute)) })
			wg.Wait()
			h.runUntil(t0.Add(20 * time.Minute))
			if ends := h.ends.of(id); len(ends) != 1 || ends[0] != statemachine.StatusFailed {
				t.Fatalf("ends recorded: %v; want one FAILED", ends)
			}
			if st, msg := h.status(id, inv); st != statemachine.StatusFailed || !strings.Contains(msg, "exit code 2") {
				t.Fatalf("invocation: %s %q; want FAILED with the exit code", st, msg)
			}
		})
	}
}

func TestAsync_ASilentTaskEndsAtTheHardTimeoutAndIsKilled(t *testing.T) {
	t.Parallel()
	h := newAsyncHarness(t)
	id := h.defineHourly("job", 20*time.Minute)
	inv, task := h.launched(id)
	if err := h.swarm.Start(task.ID); err != nil {
		t.Fatal(err)
	}
	h.runUntil(t0.Add(25 * time.Minute))
	if st, msg := h.status(id, inv); st != statemachine.StatusFailed || !strings.Contains(msg, "timed out") {
		t.Fatalf("invocation: %s %q; want FAILED, timed out", st, msg)
	}
	if st := h.swarm.Tasks()[0].State; st != "KILLED" {
		t.Errorf("the Swarming task is %s; want KILLED by the abort", st)
	}
}

func TestAsync_AbortCancelsTheRemoteTask(t *testing.T) {
	t.Parallel()
	h := newAsyncHarness(t)
	id := h.defineHourly("job", time.Hour)
	inv, task := h.launched(id)
	if err := h.swarm.Start(task.ID); err != nil {
		t.Fatal(err)
	}
	if err := h.eng.Abort(context.Background(), id, inv, "user:admin@example.com"); err != nil {
		t.Fatal(err)
	}
	if st, _ := h.status(id, inv); st != statemachine.StatusAborted {
		t.Fatalf("invocation: %s; want ABORTED", st)
	}
	if st := h.swarm.Tasks()[0].State; st != "KILLED" {
		t.Errorf("the Swarming task is %s; want KILLED", st)
	}
	// A poll or a push after the abort records nothing more.
	if err := h.eng.Check(context.Background(), id, inv, 1); err != nil {
		t.Fatal(err)
	}
	h.runUntil(t0.Add(20 * time.Minute))
	if ends := h.ends.of(id); len(ends) != 1 || ends[0] != statemachine.StatusAborted {
		t.Errorf("ends recorded: %v; want one ABORTED", ends)
	}
}

// A poll that cannot find the attempt's Swarming task (a listing that lags
// behind the launch) leaves it RUNNING for the next poll; only the hard
// timeout ends an attempt whose Swarming task never shows up.
func TestAsync_APollThatFindsNoTaskWaitsForTheNext(t *testing.T) {
	t.Parallel()
	h := newAsyncHarness(t)
	id := h.defineHourly("job", 20*time.Minute)
	inv, task := h.launched(id)
	h.swarm.Forget(task.ID)
	h.runUntil(t0.Add(15 * time.Minute))
	if st, _ := h.status(id, inv); st != statemachine.StatusRunning {
		t.Fatalf("after polls that found no Swarming task: %s; want RUNNING", st)
	}
	h.runUntil(t0.Add(25 * time.Minute))
	if st, msg := h.status(id, inv); st != statemachine.StatusFailed || !strings.Contains(msg, "timed out") {
		t.Fatalf("past the hard timeout: %s %q; want FAILED, timed out", st, msg)
	}
}
