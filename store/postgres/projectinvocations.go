package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/store"
)

// ProjectInvocations lists the project's invocation records that f picks,
// newest occurrence first, then by job id and id (descending), without
// their blobs. Across the project it walks invocations_project_class: one
// class's rows, or each class's in turn, up to a page each, merged. For
// one job it walks the job's invocations_newest.
func (s *Store) ProjectInvocations(ctx context.Context, project string, f store.InvocationFilter, p store.Page) ([]*store.InvocationRecord, string, error) {
	limit := p.Size()
	q, args, err := projectQuery(project, f, p.Cursor, limit)
	if err != nil {
		return nil, "", err
	}
	invs, err := collectInvocations(s.pool.Query(ctx, q, args...))
	if err != nil || len(invs) <= limit {
		return invs, "", err
	}
	invs = invs[:limit]
	last := invs[limit-1]
	return invs, encodeCursor("p", strconv.FormatInt(last.Occurrence.UnixMicro(), 10)+"\x00"+last.JobID+"\x00"+last.ID), nil
}

// projectQuery is ProjectInvocations' statement for a page of limit
// records (and one more, to tell whether a next page exists).
func projectQuery(project string, f store.InvocationFilter, pageCursor string, limit int) (string, []any, error) {
	var conds []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if !f.Since.IsZero() {
		conds = append(conds, "occurrence >= "+arg(f.Since))
	}
	var cursor *projectCursor
	if pageCursor != "" {
		c, err := decodeProjectCursor(pageCursor)
		if err != nil {
			return "", nil, err
		}
		cursor = &c
	}
	if f.JobID != "" {
		if jobid.Split(f.JobID).Project != project {
			return "", nil, fmt.Errorf("postgres: job %s is not of project %s", f.JobID, project)
		}
		conds = append(conds, "job_id = "+arg(f.JobID))
		if f.Class != "" {
			conds = append(conds, "class = "+arg(f.Class))
		}
		if cursor != nil {
			conds = append(conds, fmt.Sprintf("(occurrence, id) < (%s, %s)", arg(cursor.occ), arg(cursor.id)))
		}
		return "SELECT " + recentColumns + " FROM sundial.invocations i WHERE " + strings.Join(conds, " AND ") +
			" ORDER BY occurrence DESC, id DESC LIMIT " + arg(limit+1), args, nil
	}
	if cursor != nil {
		conds = append(conds, fmt.Sprintf("(occurrence, job_id, id) < (%s, %s, %s)", arg(cursor.occ), arg(cursor.jobID), arg(cursor.id)))
	}
	classes := store.StatusClasses
	if f.Class != "" {
		classes = []string{f.Class}
	}
	proj, lim := arg(project), arg(limit+1)
	var parts []string
	for _, class := range classes {
		where := append([]string{"project = " + proj, "class = " + arg(class)}, conds...)
		parts = append(parts, "(SELECT "+recentColumns+" FROM sundial.invocations i WHERE "+strings.Join(where, " AND ")+
			" ORDER BY occurrence DESC, job_id DESC, id DESC LIMIT "+lim+")")
	}
	return "SELECT * FROM (" + strings.Join(parts, " UNION ALL ") + ") u ORDER BY occurrence DESC, job_id DESC, id DESC LIMIT " + lim, args, nil
}

// projectCursor is where a page of ProjectInvocations ended.
type projectCursor struct {
	occ       time.Time
	jobID, id string
}

func decodeProjectCursor(cursor string) (projectCursor, error) {
	key, err := decodeCursor("p", cursor)
	if err == nil {
		if parts := strings.Split(key, "\x00"); len(parts) == 3 {
			if us, err := strconv.ParseInt(parts[0], 10, 64); err == nil {
				return projectCursor{time.UnixMicro(us), parts[1], parts[2]}, nil
			}
		}
	}
	return projectCursor{}, fmt.Errorf("postgres: %w %q", store.ErrInvalidCursor, cursor)
}
