package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/statemachine"
)

// ErrBackfillTooOld is returned for a backfill that reaches back past the
// job's retention age: retention may have deleted the records that tell
// which of those occurrences ran, so running them could run one twice.
var ErrBackfillTooOld = errors.New("the backfill reaches back past the job's history retention")

// Backfill runs the job's occurrences in [from, to) that have no
// invocation record, a skipped one included, one at a time, oldest first,
// on behalf of by (see statemachine.Backfill). The range is cut at where
// the schedule has accounted for occurrences (the job's cursor); what
// follows is the schedule's own.
func (e *Engine) Backfill(ctx context.Context, jobID string, from, to time.Time, by access.Identity) error {
	if !from.Before(to) {
		return fmt.Errorf("%w: the backfill range is empty: from %s is not before to %s", statemachine.ErrRefused, from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
	}
	entry := AuditEntry{By: by, Action: ActionBackfill, Reason: fmt.Sprintf("[%s, %s)", from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))}
	c, err := e.updateOrDisable(ctx, jobID, func(jt *jobTx) error {
		if jt.defErr == nil {
			ret := jt.def.Retention.Fill(e.opts.Retention)
			// Successes and skip records go first, at Age; failures stay
			// until FailureAge. Either kind is what tells an occurrence ran.
			age := min(ret.Age, ret.FailureAge)
			if oldest := jt.now.Add(-age); from.Before(oldest) {
				return fmt.Errorf("%w: records of occurrences before %s (retention age %s) may have been deleted, so which of them ran is unknown; start the backfill at %s or later",
					ErrBackfillTooOld, oldest.UTC().Format(time.RFC3339), age, oldest.UTC().Format(time.RFC3339))
			}
		}
		jt.audit(entry)
		return jt.step(statemachine.BackfillRequested{From: from, To: to})
	})
	if err != nil {
		return err
	}
	return e.carryOut(ctx, jobID, c)
}

// CancelBackfill stops the job's backfill, on behalf of by: the
// occurrences it has not started are not started and get no record; an
// invocation it started runs to its end (Abort stops it).
func (e *Engine) CancelBackfill(ctx context.Context, jobID string, by access.Identity) error {
	_, err := e.request(ctx, jobID, statemachine.BackfillCanceled{}, AuditEntry{By: by, Action: ActionCancelBackfill})
	return err
}
