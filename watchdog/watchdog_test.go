package watchdog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/store/sqlite"
)

// t0 is the start of every pass here: a Monday, 10:00 UTC.
var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// fixed is a clock that stays at t0.
func fixed() time.Time { return t0 }

// countingStore is a real store that counts what the watchdog's queries
// listed, so a test can tell what a pass cost.
type countingStore struct {
	store.Store
	mu      sync.Mutex
	queries int
	listed  int
}

func (c *countingStore) Overdue(ctx context.Context, now time.Time, limit int) ([]string, error) {
	ids, err := c.Store.Overdue(ctx, now, limit)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queries++
	c.listed += len(ids)
	return ids, err
}

func (c *countingStore) counts() (queries, listed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queries, c.listed
}

func newStore(t *testing.T) *countingStore {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "db"), sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &countingStore{Store: st}
}

// putJob stores a job whose watchdog timer is at; the blobs are opaque to
// the store and the watchdog.
func putJob(t *testing.T, st store.Store, id string, at time.Time) {
	t.Helper()
	_, err := st.Update(t.Context(), id, func(tx store.Tx) error {
		return tx.PutJob(&store.JobRecord{ID: id, Project: "p", State: "SCHEDULED", WatchdogTimerTs: at, Definition: []byte("{}"), EncodedState: []byte("{}")})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func timer(t *testing.T, st store.Store, id string) time.Time {
	t.Helper()
	j, err := st.Job(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j.WatchdogTimerTs
}

// repairer is a fake Repairer: it records its calls and moves the job's
// timer an hour past t0, unless the job still has failures to return.
type repairer struct {
	st store.Store
	// called, if set, receives each job id once its repair returns.
	called chan string

	mu        sync.Mutex
	calls     []string
	failures  map[string]int  // failures left to return, by job
	unchanged map[string]bool // jobs it finds nothing to repair in
	// quiet jobs are repaired but reported unchanged, as when another
	// process repaired them after the listing.
	quiet map[string]bool
}

var errInjected = errors.New("injected repair failure")

func (r *repairer) Repair(ctx context.Context, id string) (changed bool, err error) {
	if r.called != nil {
		defer func() { r.called <- id }()
	}
	r.mu.Lock()
	r.calls = append(r.calls, id)
	failing := r.failures[id] > 0
	if failing {
		r.failures[id]--
	}
	unchanged, quiet := r.unchanged[id], r.quiet[id]
	r.mu.Unlock()
	if failing {
		return false, errInjected
	}
	if unchanged {
		return false, nil
	}
	_, err = r.st.Update(ctx, id, func(tx store.Tx) error {
		j, err := tx.Job()
		if err != nil {
			return err
		}
		j.WatchdogTimerTs = t0.Add(time.Hour)
		return tx.PutJob(j)
	})
	return err == nil && !quiet, err
}

func (r *repairer) took() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

func (r *repairer) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = nil
}

// Tests that check the order of repairs run one worker: with more, repairs
// start in that order but may be recorded in another.

func TestPassRepairsExactlyTheOverdueJobsMostOverdueFirst(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	timers := map[string]time.Time{
		"p/waits-for-nothing": {},
		"p/due-in-1ns":        t0.Add(time.Nanosecond),
		"p/due-in-1h":         t0.Add(time.Hour),
		"p/due-now":           t0,
		"p/1ns-late":          t0.Add(-time.Nanosecond),
		"p/1m-late":           t0.Add(-time.Minute),
		"p/1h-late":           t0.Add(-time.Hour),
		"p/b-1s-late":         t0.Add(-time.Second),
		"p/a-1s-late":         t0.Add(-time.Second), // same timer: by id
	}
	for id, at := range timers {
		putJob(t, st, id, at)
	}
	rep := &repairer{st: st}
	w := New(st, rep, Options{Now: fixed, Workers: 1})

	r, err := w.Pass(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"p/1h-late", "p/1m-late", "p/a-1s-late", "p/b-1s-late", "p/1ns-late", "p/due-now"}
	if got := rep.took(); !slices.Equal(got, want) {
		t.Errorf("repaired %q\nwant     %q", got, want)
	}
	if want := (Result{Overdue: 6, Repaired: 6}); r != want {
		t.Errorf("result %+v, want %+v", r, want)
	}
	for _, id := range []string{"p/waits-for-nothing", "p/due-in-1ns", "p/due-in-1h"} {
		if got := timer(t, st, id); !got.Equal(timers[id]) {
			t.Errorf("%s: timer %v, want it untouched at %v", id, got, timers[id])
		}
	}

	// Repaired jobs are no longer overdue: the next pass has nothing to do.
	rep.reset()
	if r, err := w.Pass(t.Context()); err != nil || r != (Result{}) {
		t.Errorf("second pass = %+v, %v; want nothing done", r, err)
	}
	if got := rep.took(); len(got) != 0 {
		t.Errorf("second pass repaired %q", got)
	}
}

func TestPassCostFollowsTheOverdueJobs(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	for i := range 1000 {
		at := time.Time{} // paused or disabled: waits for nothing
		if i%2 == 1 {
			at = t0.Add(time.Duration(i) * time.Second) // waits for a task not due yet
		}
		putJob(t, st, fmt.Sprintf("p/healthy-%04d", i), at)
	}
	for i := range 3 {
		putJob(t, st, fmt.Sprintf("p/broken-%d", i), t0.Add(-time.Duration(i+1)*time.Minute))
	}
	rep := &repairer{st: st}
	w := New(st, rep, Options{Now: fixed, Workers: 1})

	r, err := w.Pass(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"p/broken-2", "p/broken-1", "p/broken-0"}; !slices.Equal(rep.took(), want) {
		t.Errorf("repaired %q, want %q", rep.took(), want)
	}
	if want := (Result{Overdue: 3, Repaired: 3}); r != want {
		t.Errorf("result %+v, want %+v", r, want)
	}
	if queries, listed := st.counts(); queries != 1 || listed != 3 {
		t.Errorf("the pass made %d queries listing %d jobs; want 1 listing 3", queries, listed)
	}
}

func TestPassRetriesAFailingRepairWithinItsBound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		failures  int
		wantCalls int
		want      Result
	}{
		{"a repair that fails once is retried and succeeds", 1, 2, Result{Overdue: 2, Repaired: 2}},
		{"a repair that fails until its last try succeeds", repairAttempts - 1, repairAttempts, Result{Overdue: 2, Repaired: 2}},
		{"a repair that fails every try is counted failed", repairAttempts, repairAttempts, Result{Overdue: 2, Repaired: 1, Failed: 1}},
		{"a repair that always fails is tried only up to the bound", 1 << 30, repairAttempts, Result{Overdue: 2, Repaired: 1, Failed: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := newStore(t)
			putJob(t, st, "p/flaky", t0.Add(-time.Hour))
			putJob(t, st, "p/fine", t0.Add(-time.Minute))
			rep := &repairer{st: st, failures: map[string]int{"p/flaky": tc.failures}}
			w := New(st, rep, Options{Now: fixed, Workers: 1})

			r, err := w.Pass(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if r != tc.want {
				t.Errorf("result %+v, want %+v", r, tc.want)
			}
			calls := rep.took()
			want := append(slices.Repeat([]string{"p/flaky"}, tc.wantCalls), "p/fine")
			if !slices.Equal(calls, want) {
				t.Errorf("calls %q\nwant  %q", calls, want)
			}
			if got := timer(t, st, "p/fine"); !got.After(t0) {
				t.Errorf("p/fine was not repaired: timer %v", got)
			}
		})
	}
}

func TestPassMaxPerPassLeavesTheRestToTheNextPass(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	var all []string
	for i := range 5 {
		id := fmt.Sprintf("p/job-%d", i)
		putJob(t, st, id, t0.Add(-time.Duration(5-i)*time.Minute))
		all = append(all, id)
	}
	rep := &repairer{st: st}
	w := New(st, rep, Options{Now: fixed, Workers: 1, MaxPerPass: 2})
	for pass, want := range [][]string{all[0:2], all[2:4], all[4:5], nil} {
		rep.reset()
		r, err := w.Pass(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.took(); !slices.Equal(got, want) {
			t.Errorf("pass %d repaired %q, want %q", pass+1, got, want)
		}
		if want := (Result{Overdue: len(want), Repaired: len(want)}); r != want {
			t.Errorf("pass %d: result %+v, want %+v", pass+1, r, want)
		}
	}
}

func TestPassReachesEveryOverdueJobInBatches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		jobs       int
		failing    int // the most overdue jobs' repairs always fail
		unchanged  int // the next ones' repairs change nothing
		batch      int
		maxPerPass int
		want       Result
	}{
		{"batches of 2 reach 7 jobs", 7, 0, 0, 2, 0, Result{Overdue: 7, Repaired: 7}},
		{"batches of 1 reach 3 jobs", 3, 0, 0, 1, 0, Result{Overdue: 3, Repaired: 3}},
		{"a batch as large as the overdue set", 4, 0, 0, 4, 0, Result{Overdue: 4, Repaired: 4}},
		{"the pass bound cuts across batches", 7, 0, 0, 2, 5, Result{Overdue: 5, Repaired: 5}},
		{"failing jobs that fill a batch do not hide the rest", 5, 2, 0, 2, 0, Result{Overdue: 5, Repaired: 3, Failed: 2}},
		{"failing jobs that fill several batches do not hide the rest", 6, 4, 0, 2, 0, Result{Overdue: 6, Repaired: 2, Failed: 4}},
		{"failing jobs count toward the pass bound", 6, 3, 0, 2, 4, Result{Overdue: 4, Repaired: 1, Failed: 3}},
		{"jobs with nothing to repair do not hide the rest", 5, 0, 3, 2, 0, Result{Overdue: 5, Repaired: 2}},
		{"failing jobs and jobs with nothing to repair in one batch", 6, 1, 1, 2, 0, Result{Overdue: 6, Repaired: 4, Failed: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := newStore(t)
			rep := &repairer{st: st, failures: map[string]int{}, unchanged: map[string]bool{}}
			var ids []string
			timers := map[string]time.Time{}
			for i := range tc.jobs {
				id := fmt.Sprintf("p/job-%d", i)
				ids = append(ids, id)
				timers[id] = t0.Add(-time.Duration(tc.jobs-i) * time.Minute)
				switch {
				case i < tc.failing:
					rep.failures[id] = 1 << 30
				case i < tc.failing+tc.unchanged:
					rep.unchanged[id] = true
				}
			}
			// Each job is tried once (a failing one up to the bound), most
			// overdue first.
			var want []string
			for i, id := range ids[:tc.want.Overdue] {
				if i < tc.failing {
					want = append(want, slices.Repeat([]string{id}, repairAttempts)...)
				} else {
					want = append(want, id)
				}
			}
			// One worker shows the order; the default number shows that
			// repairs run concurrently count and bound the same.
			for _, workers := range []int{1, 0} {
				rep.reset()
				for _, id := range ids {
					putJob(t, st, id, timers[id])
				}
				w := New(st, rep, Options{Now: fixed, Batch: tc.batch, MaxPerPass: tc.maxPerPass, Workers: workers})
				r, err := w.Pass(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if r != tc.want {
					t.Errorf("workers %d: result %+v, want %+v", workers, r, tc.want)
				}
				got := rep.took()
				if workers != 1 {
					slices.Sort(got)
					want = slices.Sorted(slices.Values(want))
				}
				if !slices.Equal(got, want) {
					t.Errorf("workers %d: calls %q\nwant  %q", workers, got, want)
				}
			}
		})
	}
}

func TestPassBoundHoldsWhenTheListingIsStale(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	var ids []string
	for i := range 5 {
		id := fmt.Sprintf("p/job-%d", i)
		putJob(t, st, id, t0.Add(-time.Duration(5-i)*time.Minute))
		ids = append(ids, id)
	}
	// The pass expects p/job-0 to be listed again and asks for one more
	// job than it may still repair; the listing has one more to give.
	rep := &repairer{st: st, quiet: map[string]bool{"p/job-0": true}}
	w := New(st, rep, Options{Now: fixed, Workers: 1, Batch: 2, MaxPerPass: 3})
	r, err := w.Pass(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := (Result{Overdue: 3, Repaired: 2}); r != want {
		t.Errorf("result %+v, want %+v", r, want)
	}
	if got := rep.took(); !slices.Equal(got, ids[:3]) {
		t.Errorf("repaired %q, want %q", got, ids[:3])
	}
}

func TestPassLeavesJobsThatFallDueDuringItToTheNext(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	putJob(t, st, "p/late", t0.Add(-time.Minute))
	putJob(t, st, "p/due-soon", t0.Add(time.Second))
	var mu sync.Mutex
	now := t0
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	rep := &repairer{st: st}
	// The clock passes p/due-soon's timer while the pass repairs p/late.
	w := New(st, repairFunc(func(ctx context.Context, id string) (bool, error) {
		mu.Lock()
		now = t0.Add(time.Minute)
		mu.Unlock()
		return rep.Repair(ctx, id)
	}), Options{Now: clock, Batch: 1})
	r, err := w.Pass(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"p/late"}; !slices.Equal(rep.took(), want) || r != (Result{Overdue: 1, Repaired: 1}) {
		t.Errorf("pass: %+v, repaired %q; want only p/late", r, rep.took())
	}
	rep.reset()
	if _, err := w.Pass(t.Context()); err != nil {
		t.Fatal(err)
	}
	if want := []string{"p/due-soon"}; !slices.Equal(rep.took(), want) {
		t.Errorf("next pass repaired %q, want %q", rep.took(), want)
	}
}

func TestPassRepairsConcurrentlyUpToItsWorkers(t *testing.T) {
	t.Parallel()
	const jobs, workers = 10, 4
	st := newStore(t)
	for i := range jobs {
		putJob(t, st, fmt.Sprintf("p/job-%d", i), t0.Add(-time.Minute))
	}
	rep := &repairer{st: st}
	var mu sync.Mutex
	running, most := 0, 0
	full := make(chan struct{}, jobs) // a token each time workers repairs run at once
	release := make(chan struct{})
	w := New(st, repairFunc(func(ctx context.Context, id string) (bool, error) {
		mu.Lock()
		running++
		most = max(most, running)
		if running == workers {
			full <- struct{}{}
		}
		mu.Unlock()
		select {
		case <-release:
		case <-ctx.Done():
		}
		mu.Lock()
		running--
		mu.Unlock()
		return rep.Repair(ctx, id)
	}), Options{Now: fixed, Workers: workers})
	done := make(chan Result, 1)
	go func() {
		r, err := w.Pass(t.Context())
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	// Let the repairs through one at a time, each once the pass has as
	// many running as it may: one after the other, the first would wait
	// here for ever.
	for range jobs - workers + 1 {
		select {
		case <-full:
		case <-time.After(10 * time.Second):
			t.Fatalf("never %d repairs at once (at most %d)", workers, most)
		}
		release <- struct{}{}
	}
	close(release)
	r := <-done
	if most != workers {
		t.Errorf("at most %d repairs ran at once, want %d", most, workers)
	}
	if want := (Result{Overdue: jobs, Repaired: jobs}); r != want {
		t.Errorf("result %+v, want %+v", r, want)
	}
}

type repairFunc func(ctx context.Context, id string) (bool, error)

func (f repairFunc) Repair(ctx context.Context, id string) (bool, error) { return f(ctx, id) }

func TestRunPassesAtEachTickUntilCancelled(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	rep := &repairer{st: st, called: make(chan string)}
	tick := make(chan time.Time) // unbuffered: a send returns once Run is between passes
	w := New(st, rep, Options{Now: fixed, Ticks: tick})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	if queries, _ := st.counts(); queries != 0 {
		t.Errorf("Run made %d queries before its first tick", queries)
	}
	for i := range 3 {
		id := fmt.Sprintf("p/job-%d", i)
		putJob(t, st, id, t0.Add(-time.Minute))
		tick <- t0
		if got := <-rep.called; got != id {
			t.Errorf("tick %d repaired %s, want %s", i+1, got, id)
		}
	}
	// This send returns once the third pass has ended.
	tick <- t0
	cancel()
	<-done
	// One query per pass: each found fewer jobs than a batch.
	if queries, _ := st.counts(); queries != 4 {
		t.Errorf("Run made %d queries in 4 ticks, want 4", queries)
	}
	if got := rep.took(); len(got) != 3 {
		t.Errorf("Run repaired %q, want 3 jobs", got)
	}
}

func TestRunStopsWhenCancelledWithoutATick(t *testing.T) {
	t.Parallel()
	st := newStore(t)
	w := New(st, &repairer{st: st}, Options{Now: fixed, Ticks: make(chan time.Time)})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := w.Run(ctx); err != nil { // returns, or the test times out
		t.Errorf("Run: %v", err)
	}
	if queries, _ := st.counts(); queries != 0 {
		t.Errorf("Run made %d queries without a tick", queries)
	}
}
