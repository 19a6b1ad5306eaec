package postgres

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/store"
)

// A record's times are timestamptz, NULL for the zero time; the task
// rows' are Unix nanoseconds.

var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

func nanos(t time.Time) (int64, error) {
	if t.Before(minTime) || t.After(maxTime) {
		return 0, fmt.Errorf("postgres: time %s is outside the years 1678 to 2262", t)
	}
	return t.UnixNano(), nil
}

// etaNanos is a task's ETA as stored: the zero time, "at once", is the
// smallest.
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
	return time.Unix(0, n).UTC()
}

// fromNull is a nullable timestamptz read back, in UTC.
func fromNull(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

const jobColumns = "id, project, state, watchdog_ts, definition, machine"

type scanner interface{ Scan(...any) error }

func scanJob(row scanner) (*store.JobRecord, error) {
	var j store.JobRecord
	var wd *time.Time
	if err := row.Scan(&j.ID, &j.Project, &j.State, &wd, &j.Definition, &j.EncodedState); err != nil {
		return nil, err
	}
	j.WatchdogTimerTs = fromNull(wd)
	return &j, nil
}

const invColumns = "job_id, id, occurrence, status, attempt, manual, created, started, ended, message, reason, count, last, definition, log, definition_hash, triggered_by, backfill"

// invUpdate is an upsert's SET for invColumns.
var invUpdate = func() string {
	var set []string
	for c := range strings.SplitSeq(invColumns, ", ") {
		if c != "job_id" && c != "id" {
			set = append(set, c+" = excluded."+c)
		}
	}
	return strings.Join(set, ", ")
}()

func scanInvocation(row scanner) (*store.InvocationRecord, error) {
	var inv store.InvocationRecord
	var created, started, ended, last *time.Time
	err := row.Scan(&inv.JobID, &inv.ID, &inv.Occurrence, &inv.Status, &inv.Attempt, &inv.Manual,
		&created, &started, &ended, &inv.Message, &inv.Reason, &inv.Count, &last, &inv.Definition, &inv.Log, &inv.DefinitionHash, &inv.TriggeredBy, &inv.Backfill)
	if err != nil {
		return nil, err
	}
	inv.Occurrence = inv.Occurrence.UTC()
	inv.Created = fromNull(created)
	inv.Started = fromNull(started)
	inv.Ended = fromNull(ended)
	inv.Last = fromNull(last)
	return &inv, nil
}
