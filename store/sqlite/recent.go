package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/sundial-cron/sundial/store"
)

// recentColumns are invColumns of the invocations table i, with the blobs a
// strip never shows read as NULL: a page of 100 jobs would otherwise read
// 2,000 logs.
var recentColumns = func() string {
	cols := strings.Split(invColumns, ", ")
	for i, c := range cols {
		if c == "definition" || c == "log" {
			cols[i] = "NULL"
		} else {
			cols[i] = "i." + c
		}
	}
	return strings.Join(cols, ", ")
}()

// Recent returns the newest n invocations of each named job in one query:
// for each job a subquery walks invocations_newest for its first n rows,
// so the cost follows n times the jobs named, not their whole history.
func (s *Store) Recent(ctx context.Context, jobIDs []string, n int) (map[string][]*store.InvocationRecord, error) {
	out := map[string][]*store.InvocationRecord{}
	if n <= 0 || len(jobIDs) == 0 {
		return out, nil
	}
	if n > store.MaxRecent || len(jobIDs) > store.MaxRecentJobs {
		return nil, fmt.Errorf("sqlite: Recent of %d jobs, %d each: at most %d jobs, %d each", len(jobIDs), n, store.MaxRecentJobs, store.MaxRecent)
	}
	args := make([]any, 0, len(jobIDs)+1)
	seen := map[string]bool{}
	for _, id := range jobIDs {
		if !seen[id] {
			seen[id] = true
			args = append(args, id)
		}
	}
	q := "WITH named(id) AS (VALUES " + strings.TrimSuffix(strings.Repeat("(?),", len(args)), ",") + ") " +
		"SELECT " + recentColumns + ` FROM named CROSS JOIN invocations i
		WHERE i.rowid IN (SELECT rowid FROM invocations WHERE job_id = named.id ORDER BY occurrence DESC, id DESC LIMIT ?)
		ORDER BY i.job_id, i.occurrence DESC, i.id DESC`
	rows, err := s.read.QueryContext(ctx, q, append(args, n)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		inv, err := scanInvocation(rows)
		if err != nil {
			return nil, err
		}
		out[inv.JobID] = append(out[inv.JobID], inv)
	}
	return out, rows.Err()
}
