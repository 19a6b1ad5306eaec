// Package retention is the once-a-minute pass that deletes invocation
// records past their job's retention, in small transactions, a bounded
// number per pass. Its cost follows what it deletes plus a bounded number
// of jobs looked at per pass (each a query or two on an index of the job's
// finished records), never the size of the history.
package retention

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/sundial-cron/sundial/internal/pass"
	"github.com/sundial-cron/sundial/store"
)

// Deleter says which of a job's finished records its retention lets go,
// and deletes them; *engine.Engine is one. The engine decides, as it
// alone reads a job's definition and holds the server's default
// retention, which its backfills are checked against too.
type Deleter interface {
	// Expiries are the store's queries, at now, of the records the job
	// rec stores lets go (store.Expired).
	Expiries(rec *store.JobRecord, now time.Time) ([2]store.Expiry, error)
	DeleteInvocations(ctx context.Context, jobID string, ids []string) error
}

// Options configure a Retainer.
type Options struct {
	// Now is the clock. Required: the pass never reads the wall clock.
	Now    func() time.Time
	Logger *slog.Logger // nil discards
	// Ticks asks Run for a pass at each value: every minute in the
	// embedded shape. The cloud shape calls Pass from its minute cron,
	// after the watchdog's, instead, and has no Ticks.
	Ticks <-chan time.Time
	// Batch is how many records one transaction deletes; 0 means 100.
	// Small, so the committer (or a Datastore commit, at most 500
	// mutations) is never held long.
	Batch int
	// MaxPerPass bounds the records one pass deletes; 0 means 20,000. A
	// job with more left is taken up again by the next pass.
	MaxPerPass int
	// JobsPerPass bounds the jobs one pass looks at, going on where the
	// last pass stopped; 0 means 1,000.
	JobsPerPass int
}

// Retainer runs retention passes: Pass for one, Run for one at each tick.
// Its cursor (where the next pass starts) is in memory: after a restart it
// starts again from the first job, which costs a sweep's queries and
// deletes nothing twice.
type Retainer struct {
	pass.Base
	store   store.Store
	deleter Deleter
	opts    Options

	mu     sync.Mutex // one pass at a time: cron may call again before one ends
	cursor string     // the Jobs page the next pass starts at
	resume string     // a job left with records to delete, first next time
}

// New returns a Retainer that deletes the expired records of st's jobs
// with d. It panics without opts.Now.
func New(st store.Store, d Deleter, opts Options) *Retainer {
	if opts.Batch <= 0 {
		opts.Batch = 100
	}
	if opts.MaxPerPass <= 0 {
		opts.MaxPerPass = 20000
	}
	if opts.JobsPerPass <= 0 {
		opts.JobsPerPass = 1000
	}
	r := &Retainer{store: st, deleter: d, opts: opts}
	r.Base = pass.New("retention", opts.Now, opts.Logger, opts.Ticks, func(ctx context.Context) (pass.Result, error) { return r.Pass(ctx) })
	return r
}

// Result is what one pass did.
type Result struct {
	Jobs    int `json:"jobs"`    // jobs looked at
	Deleted int `json:"deleted"` // records deleted
	Failed  int `json:"failed"`  // jobs whose retention failed this pass
}

// Idle reports a pass that deleted nothing and failed at nothing: every
// pass looks at jobs.
func (r Result) Idle() bool { return r.Deleted == 0 && r.Failed == 0 }

// LogValue is the counts, as a pass's log line gives them.
func (r Result) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("jobs", r.Jobs), slog.Int("deleted", r.Deleted), slog.Int("failed", r.Failed))
}

// Pass looks at up to JobsPerPass jobs, from where the last pass stopped,
// and deletes up to MaxPerPass records past their retention. A job whose
// records cannot be read or deleted is logged and skipped; the pass goes on.
func (r *Retainer) Pass(ctx context.Context) (Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var res Result
	now := r.Now()
	budget := r.opts.MaxPerPass
	if id := r.resume; id != "" {
		r.resume = ""
		rec, err := r.store.Job(ctx, id)
		if err == nil {
			res.Jobs++
			if !r.job(ctx, rec, now, &budget, &res) {
				return res, nil
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return res, err
		}
	}
	for res.Jobs < r.opts.JobsPerPass {
		jobs, next, err := r.store.Jobs(ctx, "", store.Page{Cursor: r.cursor, Limit: min(r.opts.JobsPerPass-res.Jobs, store.MaxLimit)})
		if err != nil {
			if errors.Is(err, store.ErrInvalidCursor) {
				r.cursor = ""
			}
			return res, err
		}
		for _, rec := range jobs {
			res.Jobs++
			if !r.job(ctx, rec, now, &budget, &res) {
				// The job's remaining records come first next pass,
				// and then this page again: the jobs after it on the
				// page have not been looked at (those before it cost
				// a query each and delete nothing).
				return res, ctx.Err()
			}
		}
		r.cursor = next
		if next == "" {
			break // a whole sweep done; the next pass starts again
		}
	}
	return res, ctx.Err()
}

// job deletes rec's expired records, within budget. It returns false when
// the budget ran out (rec may have more) or ctx is done.
func (r *Retainer) job(ctx context.Context, rec *store.JobRecord, now time.Time, budget *int, res *Result) bool {
	expiries, err := r.deleter.Expiries(rec, now)
	if err != nil {
		res.Failed++
		r.Logger().Warn("retention: skipping a job", "job", rec.ID, "err", err)
		return true
	}
	for _, e := range expiries {
		for {
			if *budget <= 0 {
				r.resume = rec.ID
				return false
			}
			ids, err := r.store.Expired(ctx, rec.ID, e, min(r.opts.Batch, *budget))
			if err == nil && len(ids) > 0 {
				err = r.deleter.DeleteInvocations(ctx, rec.ID, ids)
			}
			if err != nil {
				if ctx.Err() != nil {
					return false
				}
				res.Failed++
				r.Logger().Warn("retention: deleting a job's records", "job", rec.ID, "err", err)
				return true
			}
			res.Deleted += len(ids)
			*budget -= len(ids)
			if len(ids) < r.opts.Batch {
				break
			}
		}
	}
	return true
}
