package local

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/internal/pgtest"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/store/postgres"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/taskrows"
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
	runSuite(t, func(t *testing.T) func(t *testing.T) rowsStore {
		path := filepath.Join(t.TempDir(), "sundial.db")
		return func(t *testing.T) rowsStore { return openStore(t, path) }
	})
}

// TestConformanceOnPostgres runs the suite on the PostgreSQL shape's
// rows: one database, which a restarted dispatcher opens again.
func TestConformanceOnPostgres(t *testing.T) {
	t.Parallel()
	runSuite(t, func(t *testing.T) func(t *testing.T) rowsStore {
		url := pgtest.Shared(t).Database(t)
		return func(t *testing.T) rowsStore {
			s, err := postgres.Open(t.Context(), url, postgres.Options{MaxConns: 4})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
	})
}

// rowsStore is a store with task rows, as the suite's queue opens it.
type rowsStore interface {
	taskrows.Rows
	Update(ctx context.Context, jobID string, fn func(store.Tx) error) ([]task.Task, error)
	Close() error
}

// runSuite runs tasktest on dispatchers over the rows of storage, which
// returns how to open (and open again, as a new process would) new,
// empty storage.
func runSuite(t *testing.T, storage func(t *testing.T) func(t *testing.T) rowsStore) {
	tasktest.Run(t, tasktest.Backend{
		Open: func(t *testing.T, clock *fakeclock.Clock, handler task.Handler) tasktest.Queue {
			q := &suiteQueue{open: storage(t), clock: clock, handler: handler}
			q.start(t)
			return q
		},
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
// the rows of a store.
type suiteQueue struct {
	open    func(t *testing.T) rowsStore
	clock   *fakeclock.Clock
	handler task.Handler
	store   rowsStore
	d       *Dispatcher
}

// start opens the storage and starts a dispatcher on it, under a new
// owner as a new process would.
func (q *suiteQueue) start(t *testing.T) {
	q.store = q.open(t)
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
// closes the storage; a new dispatcher opens it again.
func (q *suiteQueue) Restart(t *testing.T) {
	q.store.Adopt(nil)
	if err := q.store.Close(); err != nil {
		t.Fatalf("closing the store: %v", err)
	}
	q.start(t)
}
