// Package watchdog is the once-a-minute repair pass: it finds the jobs whose
// WatchdogTimerTs has passed — a lost or purged task, a task that failed for
// good, an invocation past its hard timeout — and has the engine repair
// each. Its cost is the number of such jobs, not the number of jobs.
package watchdog

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/sundial-cron/sundial/store"
)

// Repairer repairs one overdue job; *engine.Engine is one.
type Repairer interface {
	Repair(ctx context.Context, jobID string) (bool, error)
}

// Watchdog runs repair passes.
type Watchdog struct {
	Store    store.Store
	Repairer Repairer
	Now      func() time.Time
	Logger   *slog.Logger // nil discards
	// Batch is how many overdue jobs one query asks for; 0 means 500.
	Batch int
	// MaxPerPass bounds the jobs one pass repairs, so a pass always ends;
	// the rest wait for the next pass. 0 means 100,000.
	MaxPerPass int
	// Workers is how many jobs are repaired at once; 0 means 16. Each
	// repair is a transaction of its own job: one after the other, a
	// purged queue's thousands of jobs would take a round trip to the
	// store each (tens of milliseconds on Datastore), and the pass would
	// outlast its period many times over.
	Workers int
}

// Result says what a pass did.
type Result struct {
	Overdue  int // jobs found overdue
	Repaired int // of those, jobs the engine changed
	Failed   int // of those, jobs whose repair returned an error
}

// Pass repairs the jobs overdue at the start of the pass. Jobs that become
// overdue during it wait for the next one. The jobs of one listing are
// repaired concurrently, started most overdue first.
func (w *Watchdog) Pass(ctx context.Context) (Result, error) {
	batch, most, workers := w.Batch, w.MaxPerPass, w.Workers
	if batch <= 0 {
		batch = 500
	}
	if most <= 0 {
		most = 100_000
	}
	if workers <= 0 {
		workers = 16
	}
	now := w.Now()
	var r Result
	seen := map[string]bool{}
	// stuck counts the jobs this pass tried that are still listed, the
	// most overdue first: the query asks for that many more, or failed
	// repairs that fill a batch would hide every job behind them.
	stuck := 0
	for r.Overdue < most {
		limit := stuck + min(batch, most-r.Overdue)
		ids, err := w.Store.Overdue(ctx, now, limit)
		if err != nil {
			return r, err
		}
		var fresh []string
		for _, id := range ids {
			if seen[id] {
				continue // its repair failed, or the listing is stale
			}
			seen[id] = true
			fresh = append(fresh, id)
			if r.Overdue+len(fresh) == most {
				break
			}
		}
		for _, o := range w.repairAll(ctx, fresh, workers) {
			r.Overdue++
			switch {
			case o.err != nil:
				r.Failed++
				stuck++
				w.logger().Warn("watchdog: repair failed", "job", o.id, "err", o.err)
			case o.changed:
				r.Repaired++
			default:
				stuck++ // nothing changed, so its timer has still passed
			}
		}
		if len(fresh) == 0 || len(ids) < limit {
			break
		}
	}
	return r, nil
}

type repaired struct {
	id      string
	changed bool
	err     error
}

// repairAll repairs ids, at most workers at once, and returns what each
// repair did, in the order of ids.
func (w *Watchdog) repairAll(ctx context.Context, ids []string, workers int) []repaired {
	out := make([]repaired, len(ids))
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i, id := range ids {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			changed, err := w.repair(ctx, id)
			out[i] = repaired{id: id, changed: changed, err: err}
		})
	}
	wg.Wait()
	return out
}

// repairAttempts bounds the tries of one job's repair in a pass: a store
// error is usually transient, and a job left for the next pass would wait a
// whole period longer.
const repairAttempts = 3

func (w *Watchdog) repair(ctx context.Context, id string) (changed bool, err error) {
	for range repairAttempts {
		if changed, err = w.Repairer.Repair(ctx, id); err == nil {
			return changed, nil
		}
	}
	return false, err
}

// Run runs a pass at every tick until ctx is done. The embedded shape ticks
// it every minute in process; the cloud shape calls Pass from App Engine
// cron instead.
func (w *Watchdog) Run(ctx context.Context, tick <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-tick:
			if !ok {
				return // the ticker is gone: nothing will ask for a pass again
			}
			r, err := w.Pass(ctx)
			if err != nil {
				w.logger().Error("watchdog pass failed", "err", err)
			}
			if r.Overdue > 0 {
				w.logger().Info("watchdog pass", "overdue", r.Overdue, "repaired", r.Repaired, "failed", r.Failed)
			}
		}
	}
}

func (w *Watchdog) logger() *slog.Logger {
	if w.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Logger
}
