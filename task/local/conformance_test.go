package local

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/tasktest"
)

// The suite's dispatchers back off 1s, 2s, 4s, 4s...
const (
	suiteBackoffMin = time.Second
	suiteBackoffMax = 4 * time.Second
	suiteOrphan     = 30 * time.Second
)

func TestConformance(t *testing.T) {
	t.Parallel()
	tasktest.Run(t, tasktest.Backend{
		Open: openSuiteQueue,
		Backoff: func(n int) time.Duration {
			return min(suiteBackoffMin<<(n-1), suiteBackoffMax)
		},
		// Delivered means deleted: the name is free at once.
		NameHeld: 0,
		// The crashed dispatcher's adopted tasks stay its own until its
		// last heartbeat (its last claim) is OrphanAfter old; the lease is
		// longer.
		Recovery: suiteOrphan,
	})
}

// suiteQueue is a dispatcher stepped by RunDue on the suite's clock, over
// a SQLite file.
type suiteQueue struct {
	path    string
	clock   *fakeclock.Clock
	handler task.Handler
	store   *sqlite.Store
	d       *Dispatcher
}

func openSuiteQueue(t *testing.T, clock *fakeclock.Clock, handler task.Handler) tasktest.Queue {
	q := &suiteQueue{path: filepath.Join(t.TempDir(), "sundial.db"), clock: clock, handler: handler}
	q.open(t)
	return q
}

// open opens the file and starts a dispatcher on it, under a new owner as
// a new process would.
func (q *suiteQueue) open(t *testing.T) {
	q.store = openStore(t, q.path)
	q.d = New(q.store, q.handler, Options{
		Now: q.clock.Now, BackoffMin: suiteBackoffMin, BackoffMax: suiteBackoffMax,
		OrphanAfter: suiteOrphan, Logger: quiet,
	})
}

// Post commits each task in an Update of its job, as the engine does, and
// posts what the Updates enqueued.
func (q *suiteQueue) Post(ctx context.Context, tasks ...task.Task) error {
	var enqueued []task.Task
	for _, tk := range tasks {
		got, err := q.store.Update(ctx, tk.JobID, func(tx store.Tx) error { return tx.Enqueue(tk) })
		if err != nil {
			return err
		}
		enqueued = append(enqueued, got...)
	}
	return q.d.Post(ctx, enqueued)
}

func (q *suiteQueue) DeliverDue(t *testing.T) int {
	t.Helper()
	handled, _, _, err := q.d.RunDue(t.Context(), q.clock.Now())
	if err != nil {
		t.Fatalf("RunDue: %v", err)
	}
	return handled
}

// Restart drops the dispatcher without letting it hand back anything and
// closes the file; a new dispatcher opens it again.
func (q *suiteQueue) Restart(t *testing.T) {
	q.store.Adopt(nil)
	if err := q.store.Close(); err != nil {
		t.Fatalf("closing the store: %v", err)
	}
	q.open(t)
}
