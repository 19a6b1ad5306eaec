package simulate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task"
)

// faults are the rates of each injected fault.
type faults struct {
	CommitBefore float64 // an Update fails before anything is written
	CommitAfter  float64 // an Update commits, then reports failure
	Drop         float64 // a task is lost right after its transaction committed
	Duplicate    float64 // a delivered task is delivered again, up to two hours late
	Crash        float64 // the process dies at a point of the launch path (each point)
	Purges       int     // whole-queue purges per day
	Downtimes    int     // process restarts per day, each 5 minutes to 2 hours down
	ClockJumps   int     // clock jumps per day, up to the backend's maxSkew either way
	// ClockSteps: steps of the host's wall clock per day, back or
	// forward, by seconds, minutes or an hour, that stay (an NTP step, a
	// VM resumed from a snapshot), while the process runs on; for the
	// shapes whose clock can step (backend.clockSteps).
	ClockSteps int
}

// levels are the --faults levels.
var levels = map[string]faults{
	"none":    {},
	"default": {CommitBefore: 0.01, CommitAfter: 0.005, Drop: 0.01, Duplicate: 0.02, Crash: 0.01, Purges: 1, Downtimes: 1, ClockJumps: 2, ClockSteps: 1},
	"heavy":   {CommitBefore: 0.04, CommitAfter: 0.02, Drop: 0.05, Duplicate: 0.1, Crash: 0.04, Purges: 4, Downtimes: 3, ClockJumps: 8, ClockSteps: 6},
}

// Levels lists the fault levels by name.
func Levels() []string { return []string{"none", "default", "heavy"} }

var errInjected = errors.New("injected fault")

// faultyStore is the store as the engine sees it: Update sometimes fails
// before writing, and sometimes after committing (the worst case: the
// caller must not assume nothing happened); it never writes for a call
// whose process crashed.
type faultyStore struct {
	store.Store
	sim *sim
}

func (f faultyStore) Update(ctx context.Context, jobID string, fn func(store.Tx) error) ([]task.Task, error) {
	if ctx.Err() != nil {
		// The call's process crashed (inProcess): it writes nothing more.
		return nil, context.Cause(ctx)
	}
	s := f.sim
	if s.injecting && s.rng.Float64() < s.faults.CommitBefore {
		s.count("commit_error_before")
		s.note(jobID, "injected: a commit failed")
		return nil, fmt.Errorf("%w: commit failed", errInjected)
	}
	var wrote *store.JobRecord
	tasks, err := f.Store.Update(ctx, jobID, func(tx store.Tx) error {
		wtx := &watchedTx{Tx: tx}
		err := fn(wtx)
		wrote = wtx.job
		return err
	})
	if err != nil {
		s.note(jobID, "commit refused: %v", err)
		return tasks, err
	}
	s.noteCommit(jobID, wrote, len(tasks))
	if s.injecting && s.rng.Float64() < s.faults.CommitAfter {
		s.count("commit_error_after")
		s.note(jobID, "injected: that commit reported failure")
		return nil, fmt.Errorf("%w: commit outcome lost", errInjected)
	}
	return tasks, nil
}

// lossyQueue loses some tasks right after their transaction committed, as
// a Cloud Tasks create that never arrives would; on the embedded shape,
// their committed rows go.
type lossyQueue struct {
	inner task.Queue
	sim   *sim
}

func (q lossyQueue) Post(ctx context.Context, tasks []task.Task) error {
	s := q.sim
	kept := tasks[:0:0]
	for _, t := range tasks {
		if s.injecting && s.rng.Float64() < s.faults.Drop {
			s.count("task_dropped")
			s.note(t.JobID, "injected: %s lost", t)
			if err := s.be.lose(ctx, t); err != nil {
				return err
			}
			continue
		}
		kept = append(kept, t)
	}
	return q.inner.Post(ctx, kept)
}

// spread returns n instants spread at random over each day of [from, to).
func (s *sim) spread(perDay int, from, to time.Time) []time.Time {
	var out []time.Time
	for day := from; day.Before(to); day = day.Add(24 * time.Hour) {
		for range perDay {
			out = append(out, day.Add(time.Duration(s.rng.Int64N(int64(24*time.Hour)))))
		}
	}
	return out
}
