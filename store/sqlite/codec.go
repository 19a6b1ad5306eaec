package sqlite

import (
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/sundial-cron/sundial/store"
)

// Times are stored as Unix nanoseconds, so they round-trip to the
// nanosecond; they come back in UTC. That covers the years 1678 to 2262.
var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

func nanos(t time.Time) (int64, error) {
	if t.Before(minTime) || t.After(maxTime) {
		return 0, fmt.Errorf("sqlite: time %s is outside the years 1678 to 2262", t)
	}
	return t.UnixNano(), nil
}

// nullNanos stores the zero time as NULL.
func nullNanos(t time.Time) (any, error) {
	if t.IsZero() {
		return nil, nil
	}
	return nanos(t)
}

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

func fromNull(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return fromNanos(n.Int64)
}

// A task's ETA is NOT NULL (it orders the queue); the zero ETA, "as soon as
// possible", is stored as the smallest value so that it sorts first.
func etaNanos(t time.Time) (int64, error) {
	if t.IsZero() {
		return math.MinInt64, nil
	}
	return nanos(t)
}

func fromETA(n int64) time.Time {
	if n == math.MinInt64 {
		return time.Time{}
	}
	return fromNanos(n)
}

const jobColumns = "id, project, state, watchdog_ts, definition, machine"

type scanner interface{ Scan(...any) error }

func scanJob(row scanner) (*store.JobRecord, error) {
	var j store.JobRecord
	var wd sql.NullInt64
	if err := row.Scan(&j.ID, &j.Project, &j.State, &wd, &j.Definition, &j.EncodedState); err != nil {
		return nil, err
	}
	j.WatchdogTimerTs = fromNull(wd)
	return &j, nil
}

// scanVersionedJob scans a job's version followed by jobColumns.
func scanVersionedJob(row scanner) (*store.JobRecord, int64, error) {
	var j store.JobRecord
	var wd sql.NullInt64
	var version int64
	if err := row.Scan(&version, &j.ID, &j.Project, &j.State, &wd, &j.Definition, &j.EncodedState); err != nil {
		return nil, 0, err
	}
	j.WatchdogTimerTs = fromNull(wd)
	return &j, version, nil
}

// jobArgs are the values of jobColumns, in order.
func jobArgs(j *store.JobRecord) ([]any, error) {
	wd, err := nullNanos(j.WatchdogTimerTs)
	if err != nil {
		return nil, err
	}
	return []any{j.ID, j.Project, j.State, wd, j.Definition, j.EncodedState}, nil
}

const invColumns = "job_id, id, occurrence, status, attempt, manual, created, started, ended, message, reason, count, last, definition, log, definition_hash, triggered_by, backfill"

func scanInvocation(row scanner) (*store.InvocationRecord, error) {
	var inv store.InvocationRecord
	var occ int64
	var created, started, ended, last sql.NullInt64
	err := row.Scan(&inv.JobID, &inv.ID, &occ, &inv.Status, &inv.Attempt, &inv.Manual,
		&created, &started, &ended, &inv.Message, &inv.Reason, &inv.Count, &last, &inv.Definition, &inv.Log, &inv.DefinitionHash, &inv.TriggeredBy, &inv.Backfill)
	if err != nil {
		return nil, err
	}
	inv.Occurrence = fromNanos(occ)
	inv.Created = fromNull(created)
	inv.Started = fromNull(started)
	inv.Ended = fromNull(ended)
	inv.Last = fromNull(last)
	return &inv, nil
}

// invArgs are the values of invColumns, in order.
func invArgs(inv *store.InvocationRecord) ([]any, error) {
	if inv.Occurrence.IsZero() {
		// It orders the listing; every invocation has one.
		return nil, fmt.Errorf("sqlite: invocation %s/%s has no occurrence", inv.JobID, inv.ID)
	}
	occ, err := nanos(inv.Occurrence)
	if err != nil {
		return nil, err
	}
	var times [4]any
	for i, t := range []time.Time{inv.Created, inv.Started, inv.Ended, inv.Last} {
		if times[i], err = nullNanos(t); err != nil {
			return nil, err
		}
	}
	return []any{inv.JobID, inv.ID, occ, inv.Status, inv.Attempt, inv.Manual,
		times[0], times[1], times[2], inv.Message, inv.Reason, inv.Count, times[3], inv.Definition, inv.Log, inv.DefinitionHash, inv.TriggeredBy, inv.Backfill}, nil
}
