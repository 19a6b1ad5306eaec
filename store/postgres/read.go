package postgres

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sundial-cron/sundial/store"
)

// Reads outside transactions see what is committed when they run.

const cursorVersion = "1"

func encodeCursor(kind string, key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorVersion + kind + key))
}

func decodeCursor(kind, cursor string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	s, ok := strings.CutPrefix(string(b), cursorVersion+kind)
	if err != nil || !ok {
		return "", fmt.Errorf("postgres: %w %q", store.ErrInvalidCursor, cursor)
	}
	return s, nil
}

func (s *Store) Job(ctx context.Context, id string) (*store.JobRecord, error) {
	j, err := scanJob(s.pool.QueryRow(ctx, "SELECT "+jobColumns+" FROM sundial.jobs WHERE id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	return j, err
}

func (s *Store) Jobs(ctx context.Context, project string, p store.Page) ([]*store.JobRecord, string, error) {
	after := ""
	if p.Cursor != "" {
		var err error
		if after, err = decodeCursor("j", p.Cursor); err != nil {
			return nil, "", err
		}
	}
	limit := p.Size()
	var rows pgx.Rows
	var err error
	if project == "" {
		rows, err = s.pool.Query(ctx, "SELECT "+jobColumns+" FROM sundial.jobs WHERE id > $1 ORDER BY id LIMIT $2", after, limit+1)
	} else {
		rows, err = s.pool.Query(ctx, "SELECT "+jobColumns+" FROM sundial.jobs WHERE project = $1 AND id > $2 ORDER BY id LIMIT $3", project, after, limit+1)
	}
	if err != nil {
		return nil, "", err
	}
	jobs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.JobRecord, error) { return scanJob(r) })
	if err != nil || len(jobs) <= limit {
		return jobs, "", err
	}
	jobs = jobs[:limit]
	return jobs, encodeCursor("j", jobs[limit-1].ID), nil
}

func (s *Store) Invocation(ctx context.Context, jobID, id string) (*store.InvocationRecord, error) {
	inv, err := scanInvocation(s.pool.QueryRow(ctx, "SELECT "+invColumns+" FROM sundial.invocations WHERE job_id = $1 AND id = $2", jobID, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	return inv, err
}

func (s *Store) Definition(ctx context.Context, jobID, hash string) ([]byte, error) {
	var b []byte
	err := s.pool.QueryRow(ctx, "SELECT definition FROM sundial.definitions WHERE job_id = $1 AND hash = $2", jobID, hash).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	return b, err
}

func collectInvocations(rows pgx.Rows, err error) ([]*store.InvocationRecord, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.InvocationRecord, error) { return scanInvocation(r) })
}

func (s *Store) Invocations(ctx context.Context, jobID string, p store.Page) ([]*store.InvocationRecord, string, error) {
	limit := p.Size()
	var invs []*store.InvocationRecord
	var err error
	if p.Cursor == "" {
		invs, err = collectInvocations(s.pool.Query(ctx, "SELECT "+invColumns+` FROM sundial.invocations WHERE job_id = $1
			ORDER BY occurrence DESC, id DESC LIMIT $2`, jobID, limit+1))
	} else {
		occ, id, cerr := decodeInvCursor(p.Cursor)
		if cerr != nil {
			return nil, "", cerr
		}
		invs, err = collectInvocations(s.pool.Query(ctx, "SELECT "+invColumns+` FROM sundial.invocations WHERE job_id = $1 AND (occurrence, id) < ($2, $3)
			ORDER BY occurrence DESC, id DESC LIMIT $4`, jobID, occ, id, limit+1))
	}
	if err != nil || len(invs) <= limit {
		return invs, "", err
	}
	invs = invs[:limit]
	last := invs[limit-1]
	return invs, encodeCursor("i", strconv.FormatInt(last.Occurrence.UnixMicro(), 10)+":"+last.ID), nil
}

func decodeInvCursor(cursor string) (time.Time, string, error) {
	key, err := decodeCursor("i", cursor)
	if err != nil {
		return time.Time{}, "", err
	}
	occ, id, ok := strings.Cut(key, ":")
	n, perr := strconv.ParseInt(occ, 10, 64)
	if !ok || perr != nil {
		return time.Time{}, "", fmt.Errorf("postgres: %w %q", store.ErrInvalidCursor, cursor)
	}
	return time.UnixMicro(n), id, nil
}

// recentColumns are invColumns without the log and legacy definition.
var recentColumns = func() string {
	cols := strings.Split(invColumns, ", ")
	for i, c := range cols {
		if c == "definition" || c == "log" {
			cols[i] = "NULL::bytea"
		} else {
			cols[i] = "i." + c
		}
	}
	return strings.Join(cols, ", ")
}()

// Recent reads each job's newest n with one index scan per job (the
// LATERAL join), in one query.
func (s *Store) Recent(ctx context.Context, jobIDs []string, n int) (map[string][]*store.InvocationRecord, error) {
	out := map[string][]*store.InvocationRecord{}
	if n <= 0 || len(jobIDs) == 0 {
		return out, nil
	}
	if n > store.MaxRecent || len(jobIDs) > store.MaxRecentJobs {
		return nil, fmt.Errorf("postgres: Recent of %d jobs, %d each: at most %d jobs, %d each", len(jobIDs), n, store.MaxRecentJobs, store.MaxRecent)
	}
	invs, err := collectInvocations(s.pool.Query(ctx, "SELECT "+recentColumns+` FROM (SELECT DISTINCT unnest($1::text[]) AS id) named
		CROSS JOIN LATERAL (SELECT * FROM sundial.invocations WHERE job_id = named.id ORDER BY occurrence DESC, id DESC LIMIT $2) i
		ORDER BY i.job_id, i.occurrence DESC, i.id DESC`, jobIDs, n))
	if err != nil {
		return nil, err
	}
	for _, inv := range invs {
		out[inv.JobID] = append(out[inv.JobID], inv)
	}
	return out, nil
}

func (s *Store) Overdue(ctx context.Context, now time.Time, limit int) ([]string, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT id FROM sundial.jobs WHERE watchdog_ts IS NOT NULL AND watchdog_ts <= $1
		ORDER BY watchdog_ts, id LIMIT $2`, now, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Expired lists the oldest first, as store/sqlite does: the records before
// the cutoff, which is the later of r.Before and the occurrence of the
// class's Keep-th newest record.
func (s *Store) Expired(ctx context.Context, jobID string, r store.Expiry, limit int) ([]string, error) {
	if limit <= 0 || (r.Before.IsZero() && r.Keep <= 0) {
		return nil, nil
	}
	class := "status IN ('SUCCEEDED', 'SKIPPED')"
	if r.Failures {
		class = "status IN ('FAILED', 'ABORTED')"
	}
	cutoff := minTime
	if !r.Before.IsZero() {
		cutoff = r.Before
	}
	if r.Keep > 0 {
		var kept time.Time
		err := s.pool.QueryRow(ctx, "SELECT occurrence FROM sundial.invocations WHERE job_id = $1 AND "+class+
			" ORDER BY occurrence DESC LIMIT 1 OFFSET $2", jobID, r.Keep-1).Scan(&kept)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return nil, fmt.Errorf("postgres: retention of %s: %w", jobID, err)
		case kept.After(cutoff):
			cutoff = kept
		}
	}
	rows, err := s.pool.Query(ctx, "SELECT id FROM sundial.invocations WHERE job_id = $1 AND "+class+
		" AND occurrence < $2 ORDER BY occurrence, id LIMIT $3", jobID, cutoff, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: retention of %s: %w", jobID, err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
