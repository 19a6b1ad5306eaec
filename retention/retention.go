// Package retention is the background pass that deletes invocation records
// past their job's retention (engine.Retention), in small transactions, a
// bounded number per pass. Its cost follows what it deletes plus a bounded
// number of jobs looked at per pass (each a query or two on an index of
// the job's finished records), never the size of the history.
package retention

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/store"
)

// Deleter deletes a job's finished records; *engine.Engine is one.
type Deleter interface {
	DeleteInvocations(ctx context.Context, jobID string, ids []string) error
}

// Options configure a Pass.
type Options struct {
	// Now is the clock. Required.
	Now    func() time.Time
	Logger *slog.Logger // nil discards
	// Ticks asks Run for a pass at each value (every minute in the
	// embedded shape); the cloud shape calls Pass from its minute cron.
	Ticks <-chan time.Time
	// Defaults fill what a job's retention leaves out.
	Defaults engine.Retention
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

// Retainer runs retention passes. Its cursor (where the next pass starts)
// is in memory: after a restart it starts again from the first job, which
// costs a sweep's queries and deletes nothing twice.
type Retainer struct {
	store   store.Store
	deleter Deleter
	opts    Options

	mu     sync.Mutex // one pass at a time: cron may call again before one ends
	cursor string     // the Jobs page the next pass starts at
	resume string     // a job left with records to delete, first next time
}

// New returns a Retainer over st. It panics without opts.Now.
func New(st store.Store, d Deleter, opts Options) *Retainer {
	if opts.Now == nil {
		panic("retention.New: Options.Now is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Batch <= 0 {
		opts.Batch = 100
	}
	if opts.MaxPerPass <= 0 {
		opts.MaxPerPass = 20000
	}
	if opts.JobsPerPass <= 0 {
		opts.JobsPerPass = 1000
	}
	return &Retainer{store: st, deleter: d, opts: opts}
}

// Result is what one pass did.
type Result struct {
	Jobs    int `json:"jobs"`    // jobs looked at
	Deleted int `json:"deleted"` // records deleted
	Failed  int `json:"failed"`  // jobs whose retention failed this pass
}

// Pass looks at up to JobsPerPass jobs, from where the last pass stopped,
// and deletes up to MaxPerPass records past their retention. A job whose
// records cannot be read or deleted is logged and skipped; the pass goes on.
func (r *Retainer) Pass(ctx context.Context) (Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var res Result
	now := r.opts.Now()
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
	ret, err := engine.JobRetention(rec, r.opts.Defaults)
	if err != nil {
		res.Failed++
		r.opts.Logger.Warn("retention: skipping a job", "job", rec.ID, "err", err)
		return true
	}
	for _, e := range ret.Expiries(now) {
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
				r.opts.Logger.Warn("retention: deleting a job's records", "job", rec.ID, "err", err)
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

// Run runs a pass at each of Options.Ticks until ctx is done.
func (r *Retainer) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-r.opts.Ticks:
			if !ok {
				return nil
			}
			res, err := r.Pass(ctx)
			if err != nil && ctx.Err() == nil {
				r.opts.Logger.Warn("retention pass", "err", err)
			}
			if res.Deleted > 0 || res.Failed > 0 {
				r.opts.Logger.Info("retention pass", "jobs", res.Jobs, "deleted", res.Deleted, "failed", res.Failed)
			}
		}
	}
}
