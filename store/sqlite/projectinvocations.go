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
	q, args, err := projectQuery(project, f, p.Cursor)
	if err != nil || q == "" {
		return nil, "", err
	}
	rows, err := s.read.QueryContext(ctx, q, append(args, limit+1)...)
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

// projectQuery is ProjectInvocations' query from the cursor's row on, and
// its arguments but the limit; "" for a filter that picks nothing. Across
// the project it walks invocations_project, or invocations_project_class
// for a class, so a page reads its own rows and one more. For one job it
// walks the job's invocations_newest, skipping the rows of other classes:
// at most the job's records since f.Since.
func projectQuery(project string, f store.InvocationFilter, cursor string) (string, []any, error) {
	var where []string
	var args []any
	// The index is named, not left to the planner: without statistics
	// it may take invocations_project for a class and a time range, in
	// order but reading the rows of every other class.
	index, order := "invocations_project", "occurrence DESC, job_id DESC, id DESC"
	if f.JobID != "" {
		if jobid.Split(f.JobID).Project != project {
			return "", nil, fmt.Errorf("sqlite: job %s is not of project %s", f.JobID, project)
		}
		// The order of the job's own index: job_id is the same on every
		// row it walks.
		where, args = append(where, "job_id = ?"), append(args, f.JobID)
		index, order = "invocations_newest", "occurrence DESC, id DESC"
	} else {
		where, args = append(where, "project = ?"), append(args, project)
	}
	if f.Class != "" {
		where, args = append(where, "class = ?"), append(args, f.Class)
		if f.JobID == "" {
			index = "invocations_project_class"
		}
	}
	switch {
	case f.Since.After(maxTime):
		return "", nil, nil
	case f.Since.After(minTime):
		since, err := nanos(f.Since)
		if err != nil {
			return "", nil, err
		}
		where, args = append(where, "occurrence >= ?"), append(args, since)
	}
	if cursor != "" {
		occ, jobID, id, err := decodeProjectCursor(cursor)
		switch {
		case err != nil:
			return "", nil, err
		case f.JobID != "":
			where, args = append(where, "(occurrence, id) < (?, ?)"), append(args, occ, id)
		default:
			where, args = append(where, "(occurrence, job_id, id) < (?, ?, ?)"), append(args, occ, jobID, id)
		}
	}
	return "SELECT " + recentColumns + " FROM invocations i INDEXED BY " + index + " WHERE " + strings.Join(where, " AND ") + " ORDER BY " + order + " LIMIT ?", args, nil
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
