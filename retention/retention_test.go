package retention_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/retention"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/targets/noop"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/local"
)

var now = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

func clock() time.Time { return now }

// setup defines jobs on a real SQLite store, with an engine whose default
// retention is defaults, and writes their histories: per job, statuses an
// hour apart ending an hour before now.
func setup(t *testing.T, defaults engine.Retention, jobs map[string]engine.Retention, statuses []string) (store.Store, *engine.Engine) {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "sundial.db"), sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var eng *engine.Engine
	disp := local.New(st, func(ctx context.Context, tk task.Task) error { return eng.HandleTask(ctx, tk) }, local.Options{Now: clock})
	eng = engine.New(st, disp, map[string]targets.Target{"noop": noop.Target{}}, engine.Options{Now: clock, Retention: defaults})
	for id, r := range jobs {
		if err := eng.Define(t.Context(), id, engine.Definition{Schedule: "@every 1h", Target: "noop", Retention: r}); err != nil {
			t.Fatal(err)
		}
		_, err := st.Update(t.Context(), id, func(tx store.Tx) error {
			for i, s := range statuses {
				at := now.Add(-time.Duration(len(statuses)-i) * time.Hour)
				inv := &store.InvocationRecord{JobID: id, ID: fmt.Sprintf("r%02d", i), Occurrence: at, Status: s, Attempt: 1, Created: at}
				if err := tx.PutInvocation(inv); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return st, eng
}

func remaining(t *testing.T, st store.Store, jobID string) []string {
	t.Helper()
	invs, _, err := st.Invocations(t.Context(), jobID, store.Page{Limit: store.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, inv := range invs {
		ids = append(ids, inv.ID)
	}
	slices.Sort(ids)
	return ids
}

// r00..r09, an hour apart, r09 an hour old: an old unfinished one, then
// successes, failures and a skip record.
var statuses = []string{"RUNNING", "SUCCEEDED", "FAILED", "SUCCEEDED", "SKIPPED", "FAILED", "SUCCEEDED", "ABORTED", "SUCCEEDED", "SUCCEEDED"}

// TestPassKeepsEachJobsRetention: a job's own retention, the server's
// defaults where it says nothing, failures kept apart, and the unfinished
// invocation kept however old.
func TestPassKeepsEachJobsRetention(t *testing.T) {
	t.Parallel()
	st, eng := setup(t, engine.Retention{Age: 48 * time.Hour, FailureAge: 5*time.Hour + time.Minute}, map[string]engine.Retention{
		"p/count":    {Count: 2, FailureCount: 1},
		"p/age":      {Age: 3*time.Hour + time.Minute},
		"p/defaults": {},
	}, statuses)
	r := retention.New(st, eng, retention.Options{Now: clock})
	res, err := r.Pass(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		// The newest two successes/skips, the newest failure.
		"p/count": {"r00", "r07", "r08", "r09"},
		// Successes and skips of the last 3 hours; failures of the last 5
		// (the default).
		"p/age": {"r00", "r05", "r07", "r08", "r09"},
		// All successes (48 hours); failures of the last 5 hours.
		"p/defaults": {"r00", "r01", "r03", "r04", "r05", "r06", "r07", "r08", "r09"},
	}
	deleted := 0
	for id, w := range want {
		if got := remaining(t, st, id); !slices.Equal(got, w) {
			t.Errorf("%s keeps %q, want %q", id, got, w)
		}
		deleted += len(statuses) - len(w)
	}
	if res.Deleted != deleted || res.Jobs != 3 || res.Failed != 0 {
		t.Errorf("pass = %+v, want %d deleted of 3 jobs", res, deleted)
	}
	if res, err := r.Pass(t.Context()); err != nil || res.Deleted != 0 {
		t.Errorf("second pass = %+v, %v; want nothing left to delete", res, err)
	}
}

// TestPassIsBoundedAndResumes: a pass deletes at most MaxPerPass records,
// in transactions of at most Batch, and the next passes take up where it
// stopped until the job is within its retention.
func TestPassIsBoundedAndResumes(t *testing.T) {
	t.Parallel()
	var many []string
	for range 30 {
		many = append(many, "SUCCEEDED")
	}
	st, eng := setup(t, engine.Retention{}, map[string]engine.Retention{"p/a": {Count: 5}, "p/b": {Count: 5}}, many)
	counter := &countingDeleter{Engine: eng}
	r := retention.New(st, counter, retention.Options{Now: clock, Batch: 3, MaxPerPass: 7})
	total := 0
	for pass := 1; pass <= 10; pass++ {
		res, err := r.Pass(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if res.Deleted > 7 {
			t.Errorf("pass %d deleted %d, more than MaxPerPass 7", pass, res.Deleted)
		}
		total += res.Deleted
	}
	if total != 50 {
		t.Errorf("10 passes deleted %d, want 50 (25 of each job)", total)
	}
	for _, id := range []string{"p/a", "p/b"} {
		if got := remaining(t, st, id); len(got) != 5 || got[0] != "r25" {
			t.Errorf("%s keeps %q, want r25..r29", id, got)
		}
	}
	if counter.largest > 3 {
		t.Errorf("a transaction deleted %d records, more than Batch 3", counter.largest)
	}
}

// countingDeleter is the engine, noting the most records it was asked to
// delete at once.
type countingDeleter struct {
	*engine.Engine
	largest int
}

func (c *countingDeleter) DeleteInvocations(ctx context.Context, jobID string, ids []string) error {
	c.largest = max(c.largest, len(ids))
	return c.Engine.DeleteInvocations(ctx, jobID, ids)
}

// TestRunPassesAtEachTick: Run deletes at a tick what Pass would, and
// returns when the ticks end.
func TestRunPassesAtEachTick(t *testing.T) {
	t.Parallel()
	st, eng := setup(t, engine.Retention{}, map[string]engine.Retention{"p/a": {Count: 2}}, statuses)
	ticks := make(chan time.Time, 1)
	ticks <- now
	close(ticks)
	r := retention.New(st, eng, retention.Options{Now: clock, Ticks: ticks})
	if err := r.Run(t.Context()); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	// The unfinished r00, the newest two successes, and every failure:
	// the engine's default retention keeps them.
	if got, want := remaining(t, st, "p/a"), []string{"r00", "r02", "r05", "r07", "r08", "r09"}; !slices.Equal(got, want) {
		t.Errorf("after a tick p/a keeps %q, want %q", got, want)
	}
}
