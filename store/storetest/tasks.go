package storetest

import (
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task"
)

func testReturnsEnqueued(t *testing.T, s store.Store) {
	enqueued := []task.Task{
		{Kind: task.TickLater, JobID: "proj/a", Nonce: 42, ETA: t0.Add(time.Hour)},
		{Kind: task.StartInvocation, JobID: "proj/a", Nonce: 43, ETA: t0, Invocation: "i1", Attempt: 2},
		{Kind: task.StartInvocation, JobID: "proj/a", Nonce: 44, ETA: t0.Add(time.Minute), Invocation: "i2", Attempt: 1},
	}
	got, err := s.Update(t.Context(), "proj/a", func(tx store.Tx) error {
		if err := tx.PutJob(job("proj/a")); err != nil {
			return err
		}
		for _, tk := range enqueued {
			if err := tx.Enqueue(tk); err != nil {
				return err
			}
		}
		// The same task again in one transaction is not a second task.
		return tx.Enqueue(enqueued[0])
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sameTasks(got, enqueued) {
		t.Errorf("Update returned\n%v\nwant\n%v", got, enqueued)
	}
	if stored, ok := storedTasks(t, s); ok {
		want := []task.Task{enqueued[1], enqueued[2], enqueued[0]} // by ETA
		if !sameTasks(stored, want) {
			t.Errorf("stored tasks\n%v\nwant\n%v", stored, want)
		}
	}
	// An Update that enqueues nothing returns nothing.
	got, err = s.Update(t.Context(), "proj/a", func(tx store.Tx) error { return nil })
	if err != nil || len(got) != 0 {
		t.Errorf("Update enqueuing nothing = %v, %v; want no tasks", got, err)
	}
}

func testDuplicateTaskName(t *testing.T, s store.Store) {
	first := task.Task{Kind: task.TickLater, JobID: "proj/a", Nonce: 7, ETA: t0}
	again := first
	again.ETA = t0.Add(time.Hour) // same name: Name ignores the ETA
	for _, tk := range []task.Task{first, again} {
		got, err := s.Update(t.Context(), "proj/a", func(tx store.Tx) error { return tx.Enqueue(tk) })
		if err != nil {
			t.Fatal(err)
		}
		// Posting a repeat is harmless; the backend may return it.
		if len(got) > 1 {
			t.Errorf("one Enqueue returned %d tasks: %v", len(got), got)
		}
	}
	if stored, ok := storedTasks(t, s); ok && !sameTasks(stored, []task.Task{first}) {
		t.Errorf("after enqueuing one name twice the store holds %v, want only the first %v", stored, first)
	}
}
