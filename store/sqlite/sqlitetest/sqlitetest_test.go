package sqlitetest_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/store/sqlite/sqlitetest"
	"github.com/sundial-cron/sundial/task"
)

// A lost task is gone from the store that holds it open, and a purge
// leaves nothing due.
func TestFaultsLoseTasksFromAnOpenStore(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "sundial.db")
	s, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	t0 := time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)
	a := task.Task{Kind: task.TickLater, JobID: "p/j", Nonce: 1, ETA: t0}
	b := task.Task{Kind: task.TickLater, JobID: "p/j", Nonce: 2, ETA: t0}
	if _, err := s.Update(ctx, "p/j", func(tx store.Tx) error { return errors.Join(tx.Enqueue(a), tx.Enqueue(b)) }); err != nil {
		t.Fatal(err)
	}
	if err := sqlitetest.DeleteTask(ctx, path, a.Name()); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CountTasks(ctx); err != nil || n != 1 {
		t.Errorf("CountTasks after DeleteTask = %d, %v; want 1", n, err)
	}
	if err := sqlitetest.PurgeTasks(ctx, path); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.NextDue(ctx, 30*time.Second); err != nil || ok {
		t.Errorf("NextDue on a purged queue = %v, %v; want none", ok, err)
	}
}
