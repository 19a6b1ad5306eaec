package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task"
)

// TestLocksAreTakenInKeyOrder: the lock statement sorts the keys and then
// takes the locks, so two batches never hold one lock each of a pair and
// wait for the other's.
func TestLocksAreTakenInKeyOrder(t *testing.T) {
	t.Parallel()
	s := open(t)
	plan := explain(t, s.pool, "EXPLAIN (VERBOSE, COSTS OFF) "+lockQuery, []string{"a", "b"})
	// The node that calls the lock function must be above (before, in
	// EXPLAIN's text) the Sort, whose own output must not call it.
	lockAt, sortAt := -1, -1
	for i, line := range plan {
		if strings.Contains(line, "Sort") && sortAt < 0 {
			sortAt = i
		}
		if strings.Contains(line, "Output: pg_advisory_xact_lock") && lockAt < 0 {
			lockAt = i
		}
	}
	if sortAt < 0 || lockAt < 0 || lockAt > sortAt {
		t.Fatalf("the locks are not taken after the sort:\n%s", strings.Join(plan, "\n"))
	}
}

// hold blocks every batcher of s in an Update of its own, and returns a
// function that lets them go and waits for their commits: what is
// submitted meanwhile waits for the next batches.
func hold(t *testing.T, s *Store) (release func()) {
	t.Helper()
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for i := range s.pending.n {
		entered := make(chan struct{})
		wg.Go(func() {
			_, err := s.Update(t.Context(), fmt.Sprintf("held/%d", i), func(tx store.Tx) error {
				close(entered)
				<-gate
				return tx.PutJob(&store.JobRecord{ID: fmt.Sprintf("held/%d", i), Project: "held", State: "SCHEDULED"})
			})
			if err != nil {
				t.Error(err)
			}
		})
		<-entered
	}
	return func() {
		close(gate)
		wg.Wait()
	}
}

// increment adds one to the job's Memo-free state, a counter in State.
func increment(id string) func(store.Tx) error {
	return func(tx store.Tx) error {
		n := 0
		switch j, err := tx.Job(); {
		case err == nil:
			fmt.Sscan(j.State, &n)
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		return tx.PutJob(&store.JobRecord{ID: id, Project: "p", State: fmt.Sprint(n + 1)})
	}
}

// TestUpdatesWaitingTogetherShareOneTransaction: the Updates queued while
// every batcher is busy commit in one transaction, each as if alone:
// every group's writes, its enqueued task, and no write lost among the
// Updates of one group, which go to batches one after the other.
func TestUpdatesWaitingTogetherShareOneTransaction(t *testing.T) {
	t.Parallel()
	s := open(t)
	release := hold(t, s)
	before := s.Stats()
	var waits []func() ([]task.Task, error)
	for i := range 100 {
		id := fmt.Sprintf("p/job-%03d", i)
		waits = append(waits, s.Submit(t.Context(), id, func(tx store.Tx) error {
			if err := increment(id)(tx); err != nil {
				return err
			}
			return tx.Enqueue(task.Task{JobID: id, Kind: task.TickLater, Nonce: 1})
		}))
	}
	for range 10 {
		waits = append(waits, s.Submit(t.Context(), "p/shared", increment("p/shared")))
	}
	release()
	for i, wait := range waits {
		tasks, err := wait()
		if err != nil {
			t.Fatal(err)
		}
		if i < 100 && len(tasks) != 1 {
			t.Errorf("Update %d returned %d tasks, want its 1", i, len(tasks))
		}
	}
	for i := range 100 {
		if j, err := s.Job(t.Context(), fmt.Sprintf("p/job-%03d", i)); err != nil || j.State != "1" {
			t.Fatalf("job %d: %+v, %v", i, j, err)
		}
	}
	if j, err := s.Job(t.Context(), "p/shared"); err != nil || j.State != "10" {
		t.Fatalf("the shared job after 10 increments: %+v, %v", j, err)
	}
	if n, err := s.CountTasks(t.Context()); err != nil || n != 100 {
		t.Fatalf("%d tasks queued (%v), want 100", n, err)
	}
	after := s.Stats()
	held := uint64(s.pending.n)
	if got := after.Updates - before.Updates; got != 110+held {
		t.Errorf("%d Updates committed, want %d", got, 110+held)
	}
	// The held ones, then a batch of the 100 and the first of "p/shared",
	// then one batch for each of its nine others.
	if got, want := after.Commits-before.Commits, held+1+9; got != want {
		t.Errorf("%d transactions committed, want %d", got, want)
	}
}

// TestTheReadsOfABatchShareRoundTrips: functions that each read one
// invocation, then another, make two round trips between them, of one
// statement each, and each reads its own.
func TestTheReadsOfABatchShareRoundTrips(t *testing.T) {
	t.Parallel()
	s := open(t)
	t0 := time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)
	for i := range 50 {
		id := fmt.Sprintf("p/job-%02d", i)
		if _, err := s.Update(t.Context(), id, func(tx store.Tx) error {
			return tx.PutInvocation(&store.InvocationRecord{JobID: id, ID: "first", Occurrence: t0, Status: "SUCCEEDED", Message: id})
		}); err != nil {
			t.Fatal(err)
		}
	}
	release := hold(t, s)
	before := s.Stats()
	var waits []func() ([]task.Task, error)
	for i := range 50 {
		id := fmt.Sprintf("p/job-%02d", i)
		waits = append(waits, s.Submit(t.Context(), id, func(tx store.Tx) error {
			first, err := tx.Invocation("first")
			if err != nil {
				return err
			}
			if first.Message != id {
				return fmt.Errorf("%s read %s's invocation", id, first.Message)
			}
			if _, err := tx.Invocation("second"); !errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("the absent invocation: %v", err)
			}
			return nil
		}))
	}
	release()
	for _, wait := range waits {
		if _, err := wait(); err != nil {
			t.Fatal(err)
		}
	}
	after := s.Stats()
	if got := after.ReadTrips - before.ReadTrips; got != 2 {
		t.Errorf("50 functions reading twice made %d round trips, want 2", got)
	}
	if got := after.ReadStatements - before.ReadStatements; got != 2 {
		t.Errorf("50 functions reading an invocation twice made %d statements, want 2", got)
	}
}

// TestAFailingFunctionLeavesItsBatchToCommit: an Update whose function
// fails or panics writes nothing, and the others of its batch commit; one
// whose read the server fails (the transaction is then aborted) is
// answered alone, with that failure, after the others commit again each
// in its own transaction.
func TestAFailingFunctionLeavesItsBatchToCommit(t *testing.T) {
	t.Parallel()
	s := open(t)
	release := hold(t, s)
	refused := errors.New("refused")
	wait := map[string]func() ([]task.Task, error){}
	for _, id := range []string{"p/a", "p/fails", "p/b", "p/panics", "p/bad-read", "p/c"} {
		wait[id] = s.Submit(t.Context(), id, func(tx store.Tx) error {
			if err := increment(id)(tx); err != nil {
				return err
			}
			switch id {
			case "p/fails":
				return refused
			case "p/panics":
				panic("boom")
			case "p/bad-read":
				// Not valid UTF-8: the server refuses the statement.
				_, err := tx.Invocation("\xff")
				return err
			}
			return nil
		})
	}
	release()
	for _, id := range []string{"p/a", "p/b", "p/c"} {
		if _, err := wait[id](); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if j, err := s.Job(t.Context(), id); err != nil || j.State != "1" {
			t.Fatalf("%s: %+v, %v", id, j, err)
		}
	}
	if _, err := wait["p/fails"](); !errors.Is(err, refused) {
		t.Errorf("the failing Update returned %v, want its function's error", err)
	}
	if _, err := wait["p/bad-read"](); err == nil || !strings.Contains(err.Error(), "read invocation") {
		t.Errorf("the Update whose read failed returned %v, want that failure", err)
	}
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("the panicking Update's wait raised %v, want its panic", r)
			}
		}()
		wait["p/panics"]()
	}()
	for _, id := range []string{"p/fails", "p/panics", "p/bad-read"} {
		if _, err := s.Job(t.Context(), id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s was written (%v)", id, err)
		}
	}
}

// TestAnUpdateGivenUpBeforeItsBatchNeverRuns: a caller whose context ends
// while its Update waits gets the context's error, and the function never
// runs.
func TestAnUpdateGivenUpBeforeItsBatchNeverRuns(t *testing.T) {
	t.Parallel()
	s := open(t)
	release := hold(t, s)
	ctx, cancel := context.WithCancel(t.Context())
	var ran atomic.Bool
	wait := s.Submit(ctx, "p/given-up", func(tx store.Tx) error {
		ran.Store(true)
		return nil
	})
	cancel()
	if _, err := wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("wait returned %v, want context.Canceled", err)
	}
	release()
	if _, err := s.Update(t.Context(), "p/after", increment("p/after")); err != nil {
		t.Fatal(err)
	}
	if ran.Load() {
		t.Error("the given-up Update's function ran")
	}
}
