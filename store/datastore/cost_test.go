package datastore

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/noop"
	"github.com/sundial-cron/sundial/task"
)

// queue holds posted tasks until the test delivers them, earliest ETA
// first, as Cloud Tasks would.
type queue struct {
	mu    sync.Mutex
	tasks []task.Task
}

func (q *queue) Post(_ context.Context, tasks []task.Task) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.tasks = append(q.tasks, tasks...)
	return nil
}

// next takes the earliest task due at or before until.
func (q *queue) next(until time.Time) (task.Task, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := -1
	for j, t := range q.tasks {
		if i < 0 || t.ETA.Before(q.tasks[i].ETA) {
			i = j
		}
	}
	if i < 0 || q.tasks[i].ETA.After(until) {
		return task.Task{}, false
	}
	t := q.tasks[i]
	q.tasks = slices.Delete(q.tasks, i, i+1)
	return t, true
}

// The goal of the issue: what one invocation of a noop job may cost.
const (
	maxCommitsPerInvocation = 3
	maxWritesPerInvocation  = 6
)

// TestCostPerInvocation runs the real engine on the emulator for a noop job
// on an every-minute schedule and counts, with the client's interceptor,
// what each invocation costs in Datastore commits, entity reads and writes.
func TestCostPerInvocation(t *testing.T) {
	t.Parallel()
	var counter Counter
	s := openStore(t, Options{}, &counter)
	start := time.Date(2026, 3, 2, 10, 0, 30, 0, time.UTC)
	var mu sync.Mutex
	now := start
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	q := &queue{}
	eng := engine.New(s, q, map[string]targets.Target{"noop": noop.Target{}}, engine.Options{Now: clock})

	const jobID = "proj/heartbeat"
	def := engine.Definition{Schedule: "* * * * *", Target: "noop", Policy: statemachine.Policy{Overlap: statemachine.OverlapSkip}}
	if err := eng.Define(t.Context(), jobID, def); err != nil {
		t.Fatal(err)
	}
	before := counter.Cost()

	const minutes = 10
	end := start.Add(minutes * time.Minute)
	for {
		tk, ok := q.next(end)
		if !ok {
			break
		}
		mu.Lock()
		if tk.ETA.After(now) {
			now = tk.ETA
		}
		mu.Unlock()
		if err := eng.HandleTask(t.Context(), tk); err != nil {
			t.Fatalf("HandleTask(%s): %v", tk, err)
		}
	}
	cost := counter.Cost().Sub(before)

	invs, _, err := s.Invocations(t.Context(), jobID, store.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, inv := range invs {
		if inv.Status != string(statemachine.StatusSucceeded) {
			t.Errorf("invocation %s is %s, want SUCCEEDED", inv.ID, inv.Status)
		}
	}
	if len(invs) != minutes {
		t.Fatalf("%d invocations in %d minutes, want %d", len(invs), minutes, minutes)
	}
	n := float64(len(invs))
	t.Logf("datastore per invocation: commits=%.1f reads=%.1f writes=%.1f (calls=%.1f; %d invocations: %v)",
		float64(cost.Commits)/n, float64(cost.Reads)/n, float64(cost.Writes)/n, float64(cost.Calls)/n, len(invs), cost)
	if float64(cost.Commits)/n > maxCommitsPerInvocation || float64(cost.Writes)/n > maxWritesPerInvocation {
		t.Errorf("over the goal of %d commits and %d entity writes per invocation", maxCommitsPerInvocation, maxWritesPerInvocation)
	}
}
