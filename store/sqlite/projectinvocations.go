package sqlite

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/store"
)

// ProjectInvocations lists the project's invocation records that f picks,
// newest occurrence first, then by job id and id (descending), with the
// blobs read as NULL (projectQuery says which index serves it).
func (s *Store) ProjectInvocations(ctx context.Context, project string, f store.InvocationFilter, p store.Page) ([]*store.InvocationRecord, string, error) {
	limit := p.Size()
	q, args, err := projectQuery(project, f, p.Cursor, limit+1)
	if err != nil || q == "" {
		return nil, "", err
	}
	rows, err := s.read.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var invs []*store.InvocationRecord
	for rows.Next() {
		inv, err := scanInvocation(rows)
		if err != nil {
			return nil, "", err
		}
		invs = append(invs, inv)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	if len(invs) <= limit {
		return invs, "", nil
	}
	invs = invs[:limit]
	last := invs[limit-1]
	return invs, encodeCursor("p", strconv.FormatInt(last.Occurrence.UnixNano(), 10)+"\x00"+last.JobID+"\x00"+last.ID), nil
}

// projectQuery is ProjectInvocations' query of up to limit rows from the
// cursor's row on, and its arguments; "" for a filter that picks nothing.
// Across the project it walks invocations_project_class: for a class, the
// class's rows, so a page reads its own rows and one more; for every
// class, each class's rows in turn, up to limit each, merged: a page reads
// at most four times its rows. One index on the project and class, not
// two (one more on the project alone), since every index costs each
// invocation's writes. For one job it walks the job's invocations_newest,
// skipping the rows of other classes: at most the job's records since
// f.Since.
func projectQuery(project string, f store.InvocationFilter, cursor string, limit int) (string, []any, error) {
	var conds []string
	var args []any
	switch {
	case f.Since.After(maxTime):
		return "", nil, nil
	case f.Since.After(minTime):
		since, err := nanos(f.Since)
		if err != nil {
			return "", nil, err
		}
		conds, args = append(conds, "occurrence >= ?"), append(args, since)
	}
	var occ int64
	var afterJob, afterID string
	if cursor != "" {
		var err error
		if occ, afterJob, afterID, err = decodeProjectCursor(cursor); err != nil {
			return "", nil, err
		}
	}
	if f.JobID != "" {
		if jobid.Split(f.JobID).Project != project {
			return "", nil, fmt.Errorf("sqlite: job %s is not of project %s", f.JobID, project)
		}
		where, wargs := []string{"job_id = ?"}, []any{f.JobID}
		if f.Class != "" {
			where, wargs = append(where, "class = ?"), append(wargs, f.Class)
		}
		if cursor != "" {
			// The order of the job's own index: job_id is the same on
			// every row it walks.
			conds, args = append(conds, "(occurrence, id) < (?, ?)"), append(args, occ, afterID)
		}
		return "SELECT " + recentColumns + " FROM invocations i INDEXED BY invocations_newest WHERE " + strings.Join(append(where, conds...), " AND ") +
			" ORDER BY occurrence DESC, id DESC LIMIT ?", append(append(wargs, args...), limit), nil
	}
	if cursor != "" {
		conds, args = append(conds, "(occurrence, job_id, id) < (?, ?, ?)"), append(args, occ, afterJob, afterID)
	}
	// The index is named, not left to the planner: without statistics
	// it may choose another that reads more rows.
	one := "SELECT " + recentColumns + " FROM invocations i INDEXED BY invocations_project_class WHERE " +
		strings.Join(append([]string{"project = ?", "class = ?"}, conds...), " AND ") + " ORDER BY occurrence DESC, job_id DESC, id DESC LIMIT ?"
	if f.Class != "" {
		return one, append(append([]any{project, f.Class}, args...), limit), nil
	}
	var parts []string
	var all []any
	for _, class := range store.StatusClasses {
		parts = append(parts, "SELECT * FROM ("+one+")")
		all = append(append(append(all, project, class), args...), limit)
	}
	return strings.Join(parts, " UNION ALL ") + " ORDER BY occurrence DESC, job_id DESC, id DESC LIMIT ?", append(all, limit), nil
}

func decodeProjectCursor(cursor string) (occ int64, jobID, id string, err error) {
	key, err := decodeCursor("p", cursor)
	if err != nil {
		return 0, "", "", err
	}
	parts := strings.Split(key, "\x00")
	if len(parts) == 3 {
		if occ, err = strconv.ParseInt(parts[0], 10, 64); err == nil {
			return occ, parts[1], parts[2], nil
		}
	}
	return 0, "", "", fmt.Errorf("sqlite: %w %q", store.ErrInvalidCursor, cursor)
}
