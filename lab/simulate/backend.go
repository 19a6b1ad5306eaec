package simulate

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/store/sqlite/sqlitetest"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/local"
)

// backend is a store and the task queue of its shape, as the simulator
// drives them. Times are the true simulated time: a queue that runs on the
// process's clock converts.
type backend interface {
	store() store.Store
	// queue is what the engine posts to; its tasks go to handle.
	queue(handle task.Handler) task.Queue
	// runDue delivers every task due now, including those the handlers post
	// due now, and says when the next one falls due.
	runDue(ctx context.Context) (next time.Time, ok bool, err error)
	nextDue(ctx context.Context) (time.Time, bool, error)
	// lose loses a task that the engine is about to post.
	lose(ctx context.Context, t task.Task) error
	purge(ctx context.Context) error
	// down says the process was down over [from, to).
	down(from, to time.Time)
	// maxSkew bounds the clock jumps: how far the process's clock can be
	// from the clock the queue runs on.
	maxSkew() time.Duration
	// clockSteps reports whether the shape runs on a clock that steps
	// (faults.ClockSteps).
	clockSteps() bool
	report(r *Report)
	close() error
}

// sqliteBackend is the embedded shape: the SQLite store, whose transactions
// commit their tasks as rows, and task/local's dispatcher on the process's
// clock.
type sqliteBackend struct {
	sim  *sim
	path string // the database file
	st   *sqlite.Store
	disp *local.Dispatcher
}

func openSQLite(s *sim, dir string) (*sqliteBackend, error) {
	path := filepath.Join(dir, "simulate.db")
	st, err := sqlite.Open(path, sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		return nil, err
	}
	return &sqliteBackend{sim: s, path: path, st: st}, nil
}

func (b *sqliteBackend) store() store.Store { return b.st }

func (b *sqliteBackend) queue(handle task.Handler) task.Queue {
	b.disp = local.New(b.st, handle, local.Options{
		Owner: "simulate", Workers: workers, OrphanAfter: orphanAfter, Now: b.sim.clock,
		// Failed deliveries are the faults it injects: the report counts them.
		Logger: slog.New(slog.DiscardHandler),
	})
	return b.disp
}

func (b *sqliteBackend) runDue(ctx context.Context) (time.Time, bool, error) {
	_, next, ok, err := b.disp.RunDue(ctx, b.sim.clock())
	return next.Add(-b.sim.skew), ok, err
}

func (b *sqliteBackend) nextDue(ctx context.Context) (time.Time, bool, error) {
	next, ok, err := b.st.NextDue(ctx, orphanAfter)
	return next.Add(-b.sim.skew), ok, err
}

// lose deletes the task's row, which its transaction already committed.
func (b *sqliteBackend) lose(ctx context.Context, t task.Task) error {
	return sqlitetest.DeleteTask(ctx, b.path, t.Name())
}

func (b *sqliteBackend) purge(ctx context.Context) error { return sqlitetest.PurgeTasks(ctx, b.path) }

// down does nothing: the tasks wait in the file, and the dispatcher takes
// the due ones when the process is back.
func (b *sqliteBackend) down(from, to time.Time) {}

// maxSkew: one machine's clock can jump minutes (a bad NTP step, a VM
// resumed); the dispatcher reads the same clock as the engine.
func (b *sqliteBackend) maxSkew() time.Duration { return 2 * time.Minute }

// clockSteps: the host's clock, which the engine and the dispatcher both
// read, is stepped by NTP or by a VM resumed from a snapshot.
func (b *sqliteBackend) clockSteps() bool { return true }

func (b *sqliteBackend) report(r *Report) {
	stats := b.st.Stats()
	r.StoreUpdates, r.StoreCommits = stats.Updates, stats.Commits
}

func (b *sqliteBackend) close() error { return b.st.Close() }
