package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/sundial-cron/sundial/store"
)

// Retention is how long a job's invocation records are kept, apart for
// failures (FAILED, ABORTED), which people look back at longer, and for
// the rest (SUCCEEDED, and skip records, each standing for the
// occurrences it folded). A record goes when it is older than its class's
// age or beyond its class's newest count; a zero field takes the server's
// default (Fill). Unfinished invocations are never deleted.
type Retention struct {
	Age          time.Duration `json:"age,omitzero"`
	Count        int           `json:"count,omitzero"`
	FailureAge   time.Duration `json:"failure_age,omitzero"`
	FailureCount int           `json:"failure_count,omitzero"`
}

// DefaultRetention is the server's default unless its flags say otherwise.
var DefaultRetention = Retention{Age: 30 * 24 * time.Hour, Count: 1000, FailureAge: 90 * 24 * time.Hour, FailureCount: 1000}

// Fill returns r with its zero fields taken from defaults.
func (r Retention) Fill(defaults Retention) Retention {
	if r.Age == 0 {
		r.Age = defaults.Age
	}
	if r.Count == 0 {
		r.Count = defaults.Count
	}
	if r.FailureAge == 0 {
		r.FailureAge = defaults.FailureAge
	}
	if r.FailureCount == 0 {
		r.FailureCount = defaults.FailureCount
	}
	return r
}

// Expiries are the store's two queries of r at now, one per class; an age
// or count still zero after Fill bounds nothing.
func (r Retention) Expiries(now time.Time) [2]store.Expiry {
	before := func(age time.Duration) time.Time {
		if age <= 0 {
			return time.Time{}
		}
		return now.Add(-age)
	}
	return [2]store.Expiry{
		{Before: before(r.Age), Keep: r.Count},
		{Failures: true, Before: before(r.FailureAge), Keep: r.FailureCount},
	}
}

// JobRetention is the retention of the job rec stores, its zero fields
// taken from defaults.
func JobRetention(rec *store.JobRecord, defaults Retention) (Retention, error) {
	def, err := decodeDefinition(rec.Definition)
	if err != nil {
		return Retention{}, fmt.Errorf("job %s: definition: %w", rec.ID, err)
	}
	return def.Retention.Fill(defaults), nil
}

// Expiries are the store's queries, at now, of the records the job rec
// stores lets go: its retention, with the server's default
// (Options.Retention) where it says nothing, as Backfill reads it. The
// retention pass asks, so that the default is given in one place.
func (e *Engine) Expiries(rec *store.JobRecord, now time.Time) ([2]store.Expiry, error) {
	ret, err := JobRetention(rec, e.opts.Retention)
	if err != nil {
		return [2]store.Expiry{}, err
	}
	return ret.Expiries(now), nil
}

// DeleteInvocations deletes the job's finished invocation records among
// ids in one transaction; unfinished ones stay (store.Tx.DeleteInvocation).
func (e *Engine) DeleteInvocations(ctx context.Context, jobID string, ids []string) error {
	_, err := e.store.Update(ctx, jobID, func(tx store.Tx) error {
		for _, id := range ids {
			if err := tx.DeleteInvocation(id); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}
