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

	"github.com/sundial-cron/sundial/internal/pass"
	"github.com/sundial-cron/sundial/store"
)

// Repairer repairs one overdue job; *engine.Engine is one.
type Repairer interface {
	Repair(ctx context.Context, jobID string) (bool, error)
}

// Options configure a Watchdog.
type Options struct {
	// Now is the clock. Required: the watchdog never reads the wall clock.
	Now    func() time.Time
	Logger *slog.Logger // nil discards
	// Ticks asks Run for a pass at each value: every minute in the
	// embedded shape. The cloud shape calls Pass from its minute cron
	// (App Engine cron or Cloud Scheduler) instead, and has no Ticks.
	Ticks <-chan time.Time
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

// Watchdog runs repair passes: Pass for one, Run for one at each tick.
type Watchdog struct {
	pass.Base
	store    store.Store
	repairer Repairer
	opts     Options
}

// New returns a watchdog that repairs the overdue jobs of st with r. It
// panics without opts.Now.
func New(st store.Store, r Repairer, opts Options) *Watchdog {
	if opts.Batch <= 0 {
		opts.Batch = 500
	}
	if opts.MaxPerPass <= 0 {
		opts.MaxPerPass = 100_000
	}
	if opts.Workers <= 0 {
		opts.Workers = 16
	}
	w := &Watchdog{store: st, repairer: r, opts: opts}
	w.Base = pass.New("watchdog", opts.Now, opts.Logger, opts.Ticks, func(ctx context.Context) (pass.Result, error) { return w.Pass(ctx) })
	return w
}

// Result says what a pass did.
type Result struct {
	Overdue  int // jobs found overdue
	Repaired int // of those, jobs the engine changed
	Failed   int // of those, jobs whose repair returned an error
}

// Idle reports a pass that found no job overdue.
func (r Result) Idle() bool { return r.Overdue == 0 }

// LogValue is the counts, as a pass's log line gives them.
func (r Result) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("overdue", r.Overdue), slog.Int("repaired", r.Repaired), slog.Int("failed", r.Failed))
}

// Pass repairs the jobs overdue at the start of the pass. Jobs that become
// overdue during it wait for the next one. The jobs of one listing are
// repaired concurrently, started most overdue first.
func (w *Watchdog) Pass(ctx context.Context) (Result, error) {
	batch, most, workers := w.opts.Batch, w.opts.MaxPerPass, w.opts.Workers
	now := w.Now()
	var r Result
	seen := map[string]bool{}
	// stuck counts the jobs this pass tried that are still listed, the
	// most overdue first: the query asks for that many more, or failed
	// repairs that fill a batch would hide every job behind them.
	stuck := 0
	for r.Overdue < most {
		limit := stuck + min(batch, most-r.Overdue)
		ids, err := w.store.Overdue(ctx, now, limit)
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
				w.Logger().Warn("watchdog: repair failed", "job", o.id, "err", o.err)
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
		if changed, err = w.repairer.Repair(ctx, id); err == nil {
			return changed, nil
		}
	}
	return false, err
}
