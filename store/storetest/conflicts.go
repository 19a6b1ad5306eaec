package storetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task"
)

// increment adds one to the counter the job keeps in Machine, creating the
// job at 1, and retries on ErrConflict. It returns the count it wrote.
func increment(ctx context.Context, s store.Store, id string) (int, error) {
	for {
		var wrote int
		_, err := s.Update(ctx, id, incrementing(id, &wrote))
		if !errors.Is(err, store.ErrConflict) {
			return wrote, err
		}
	}
}

// incrementing is increment's transaction: it sets *wrote to the count it
// writes.
func incrementing(id string, wrote *int) func(store.Tx) error {
	return func(tx store.Tx) error {
		j, err := tx.Job()
		if errors.Is(err, store.ErrNotFound) {
			j, err = job(id), nil
		}
		if err != nil {
			return err
		}
		n := 0
		if len(j.EncodedState) > 0 {
			if n, err = strconv.Atoi(string(j.EncodedState)); err != nil {
				return err
			}
		}
		*wrote = n + 1
		j.EncodedState = []byte(strconv.Itoa(*wrote))
		if err := tx.PutJob(j); err != nil {
			return err
		}
		return tx.PutInvocation(&store.InvocationRecord{JobID: id, ID: fmt.Sprintf("inc-%05d", *wrote), Occurrence: t0.Add(time.Duration(*wrote) * time.Second), Status: "SUCCEEDED"})
	}
}

func counter(t *testing.T, s store.Store, id string) int {
	t.Helper()
	j, err := s.Job(t.Context(), id)
	if err != nil {
		t.Fatalf("Job(%s): %v", id, err)
	}
	n, err := strconv.Atoi(string(j.EncodedState))
	if err != nil {
		t.Fatalf("counter of %s: %v", id, err)
	}
	return n
}

// hammer runs perJob increments of each job, from workers goroutines per
// job, and checks that every job counts exactly its increments, each count
// written once.
func hammer(t *testing.T, s store.Store, jobs, workers, perWorker int) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]map[int]bool{}
	for j := range jobs {
		seen[fmt.Sprintf("proj/job%03d", j)] = map[int]bool{}
	}
	for id := range seen {
		for range workers {
			wg.Go(func() {
				for range perWorker {
					n, err := increment(t.Context(), s, id)
					if err != nil {
						t.Errorf("increment %s: %v", id, err)
						return
					}
					mu.Lock()
					if seen[id][n] {
						t.Errorf("two Updates of %s both wrote count %d", id, n)
					}
					seen[id][n] = true
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	for id := range seen {
		if got, want := counter(t, s, id), workers*perWorker; got != want {
			t.Errorf("%s counts %d after %d increments", id, got, want)
		}
		invs, next, err := s.Invocations(t.Context(), id, store.Page{Limit: workers*perWorker + 1})
		if err != nil || next != "" || len(invs) != workers*perWorker {
			t.Errorf("%s has %d invocations (next %q, err %v), want %d", id, len(invs), next, err, workers*perWorker)
		}
	}
}

func testConcurrentOneJob(t *testing.T, s store.Store) { hammer(t, s, 1, 32, 8) }

func testConcurrentManyJobs(t *testing.T, s store.Store) { hammer(t, s, 16, 4, 4) }

// testSubmitted: a store.Submitter given many Updates at once by one
// caller, several of one job among them, commits each of them once, as
// Update would.
func testSubmitted(t *testing.T, s store.Store) {
	sub, ok := s.(store.Submitter)
	if !ok {
		t.Skipf("%T is not a store.Submitter, which is optional", s)
	}
	const jobs, each = 8, 4
	var waits []func() ([]task.Task, error)
	var ids []string
	for range each {
		for j := range jobs {
			id := fmt.Sprintf("proj/job%03d", j)
			ids = append(ids, id)
			waits = append(waits, sub.Submit(t.Context(), id, incrementing(id, new(int))))
		}
	}
	for i, wait := range waits {
		_, err := wait()
		if errors.Is(err, store.ErrConflict) {
			// As Update may: made again, as callers do.
			_, err = increment(t.Context(), s, ids[i])
		}
		if err != nil {
			t.Errorf("Submit %d: %v", i, err)
		}
	}
	for j := range jobs {
		id := fmt.Sprintf("proj/job%03d", j)
		if got := counter(t, s, id); got != each {
			t.Errorf("%s counts %d after %d submitted increments", id, got, each)
		}
		if invs, _, err := s.Invocations(t.Context(), id, store.Page{Limit: 2 * each}); err != nil || len(invs) != each {
			t.Errorf("%s has %d invocations (err %v), want one per increment, %d", id, len(invs), err, each)
		}
	}
}
