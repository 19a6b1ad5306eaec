package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task"
)

// A Datastore transaction does not see its own mutations; a backend on it
// keeps them in its Tx, because the engine reads after it writes.
func testReadsOwnWrites(t *testing.T, s store.Store) {
	j := job("proj/a")
	inv := &store.InvocationRecord{JobID: j.ID, ID: "i1", Occurrence: t0, Status: "LAUNCHING"}
	_, err := s.Update(t.Context(), j.ID, func(tx store.Tx) error {
		if err := tx.PutJob(j); err != nil {
			return err
		}
		if err := tx.PutInvocation(inv); err != nil {
			return err
		}
		got, err := tx.Job()
		if err != nil || !sameJob(got, j) {
			t.Errorf("Tx.Job() after PutJob = %+v, %v; want %+v", got, err, j)
		}
		gotInv, err := tx.Invocation(inv.ID)
		if err != nil || !sameInvocation(gotInv, inv) {
			t.Errorf("Tx.Invocation() after PutInvocation = %+v, %v; want %+v", gotInv, err, inv)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func testFnErrorWritesNothing(t *testing.T, s store.Store) {
	before := job("proj/a")
	put(t, s, before)
	tasks, err := s.Update(t.Context(), before.ID, func(tx store.Tx) error {
		after := job(before.ID)
		after.State = "RUNNING"
		after.WatchdogTimerTs = t0
		if err := tx.PutJob(after); err != nil {
			return err
		}
		if err := tx.PutInvocation(&store.InvocationRecord{JobID: before.ID, ID: "i1", Occurrence: t0, Status: "LAUNCHING"}); err != nil {
			return err
		}
		if err := tx.Enqueue(task.Task{Kind: task.StartInvocation, JobID: before.ID, Nonce: 1, ETA: t0, Invocation: "i1", Attempt: 1}); err != nil {
			return err
		}
		return fmt.Errorf("fn gives up: %w", errBoom)
	})
	if !errors.Is(err, errBoom) {
		t.Errorf("Update error = %v, want fn's error", err)
	}
	if tasks != nil {
		t.Errorf("Update returned tasks %v of a transaction that did not commit", tasks)
	}
	readJob(t, s, before.ID, before)
	if _, err := s.Invocation(t.Context(), before.ID, "i1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("invocation written by a failed fn: Invocation error = %v, want ErrNotFound", err)
	}
	if stored, ok := storedTasks(t, s); ok && len(stored) != 0 {
		t.Errorf("tasks enqueued by a failed fn were stored: %v", stored)
	}
	if ids, err := s.Overdue(t.Context(), t0.Add(time.Hour), 10); err != nil || len(ids) != 0 {
		t.Errorf("Overdue after a failed fn = %v, %v; want nothing", ids, err)
	}
}

func testOwnGroupOnly(t *testing.T, s store.Store) {
	put(t, s, job("proj/a"))
	tries := map[string]func(tx store.Tx) error{
		"PutJob": func(tx store.Tx) error { return tx.PutJob(job("proj/b")) },
		"PutInvocation": func(tx store.Tx) error {
			return tx.PutInvocation(&store.InvocationRecord{JobID: "proj/b", ID: "i1", Occurrence: t0, Status: "QUEUED"})
		},
	}
	for name, try := range tries {
		var refused error
		_, err := s.Update(t.Context(), "proj/a", func(tx store.Tx) error {
			refused = try(tx)
			// fn swallows the refusal: the Update must fail all the same,
			// or it would commit half of what fn meant.
			return nil
		})
		if refused == nil {
			t.Errorf("%s into another group was accepted", name)
		}
		if err == nil {
			t.Errorf("%s into another group: Update committed though the write was refused", name)
		}
	}
	if _, err := s.Job(t.Context(), "proj/b"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Job(proj/b) written from proj/a's transaction: error = %v, want ErrNotFound", err)
	}
	if _, err := s.Invocation(t.Context(), "proj/b", "i1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Invocation of proj/b written from proj/a's transaction: error = %v, want ErrNotFound", err)
	}
}

func testCancelled(t *testing.T, s store.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ran := false
	_, err := s.Update(ctx, "proj/a", func(tx store.Tx) error {
		ran = true
		return tx.PutJob(job("proj/a"))
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Update with a cancelled context: error = %v, want context.Canceled", err)
	}
	if ran {
		t.Error("Update with a cancelled context ran fn")
	}
	if _, err := s.Job(t.Context(), "proj/a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Job written by a cancelled Update: error = %v, want ErrNotFound", err)
	}
}
