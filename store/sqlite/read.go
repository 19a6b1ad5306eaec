package sqlite

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/store"
)

// Cursors are the sort key of the last row of the page, so the next page
// starts right after it whatever was inserted meanwhile. The kind prefix
// rejects a cursor of one listing passed to another. A cursor starts with
// its format's version, so a later format can tell this one apart: someone
// paging through an upgrade holds a cursor of the release before. Version 0
// (313afd2 and before) is version 1 without its mark, and still read; its
// kinds are letters, never the digit of a mark.
const cursorVersion = "1"

func encodeCursor(kind string, key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorVersion + kind + key))
}

func decodeCursor(kind, cursor string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	s := strings.TrimPrefix(string(b), cursorVersion) // absent: version 0
	if err != nil || !strings.HasPrefix(s, kind) {
		return "", fmt.Errorf("sqlite: %w %q", store.ErrInvalidCursor, cursor)
	}
	return s[len(kind):], nil
}

// Job reads a job from the last committed state.
func (s *Store) Job(ctx context.Context, id string) (*store.JobRecord, error) {
	j, err := scanJob(s.read.QueryRowContext(ctx, "SELECT "+jobColumns+" FROM jobs WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	return j, err
}

// Jobs lists a project's jobs (all jobs for project ""), by id. The jobs
// it reads are cached for Update unless a later version is (see load):
// applying a project's config lists its jobs first, and after a restart
// its Updates then find each job cached instead of reading it one by one.
func (s *Store) Jobs(ctx context.Context, project string, p store.Page) ([]*store.JobRecord, string, error) {
	after := ""
	if p.Cursor != "" {
		var err error
		if after, err = decodeCursor("j", p.Cursor); err != nil {
			return nil, "", err
		}
	}
	limit := p.Size()
	var rows *sql.Rows
	var err error
	// One row more than asked tells whether there is a next page.
	if project == "" {
		rows, err = s.read.QueryContext(ctx, "SELECT version, "+jobColumns+" FROM jobs WHERE id > ? ORDER BY id LIMIT ?", after, limit+1)
	} else {
		rows, err = s.read.QueryContext(ctx, "SELECT version, "+jobColumns+" FROM jobs WHERE project = ? AND id > ? ORDER BY id LIMIT ?", project, after, limit+1)
	}
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var jobs []*store.JobRecord
	for rows.Next() {
		j, version, err := scanVersionedJob(rows)
		if err != nil {
			return nil, "", err
		}
		s.cache.putIfNewer(j.ID, &cachedGroup{version: version, job: cloneJob(j)})
		jobs = append(jobs, j)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	if len(jobs) <= limit {
		return jobs, "", nil
	}
	jobs = jobs[:limit]
	return jobs, encodeCursor("j", jobs[limit-1].ID), nil
}

// Invocation reads one invocation from the last committed state.
func (s *Store) Invocation(ctx context.Context, jobID, id string) (*store.InvocationRecord, error) {
	inv, err := scanInvocation(s.read.QueryRowContext(ctx, "SELECT "+invColumns+" FROM invocations WHERE job_id = ? AND id = ?", jobID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	return inv, err
}

// Definition reads one of the job's stored definitions.
func (s *Store) Definition(ctx context.Context, jobID, hash string) ([]byte, error) {
	var b []byte
	err := s.read.QueryRowContext(ctx, "SELECT definition FROM definitions WHERE job_id = ? AND hash = ?", jobID, hash).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	return b, err
}

// Invocations lists a job's invocations, newest occurrence first, and by
// id (descending) among equal occurrences.
func (s *Store) Invocations(ctx context.Context, jobID string, p store.Page) ([]*store.InvocationRecord, string, error) {
	limit := p.Size()
	var rows *sql.Rows
	var err error
	if p.Cursor == "" {
		rows, err = s.read.QueryContext(ctx, "SELECT "+invColumns+` FROM invocations WHERE job_id = ?
			ORDER BY occurrence DESC, id DESC LIMIT ?`, jobID, limit+1)
	} else {
		occ, id, cerr := decodeInvCursor(p.Cursor)
		if cerr != nil {
			return nil, "", cerr
		}
		rows, err = s.read.QueryContext(ctx, "SELECT "+invColumns+` FROM invocations WHERE job_id = ? AND (occurrence, id) < (?, ?)
			ORDER BY occurrence DESC, id DESC LIMIT ?`, jobID, occ, id, limit+1)
	}
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
	return invs, encodeCursor("i", strconv.FormatInt(last.Occurrence.UnixNano(), 10)+":"+last.ID), nil
}

func decodeInvCursor(cursor string) (int64, string, error) {
	key, err := decodeCursor("i", cursor)
	if err != nil {
		return 0, "", err
	}
	occ, id, ok := strings.Cut(key, ":")
	n, perr := strconv.ParseInt(occ, 10, 64)
	if !ok || perr != nil {
		return 0, "", fmt.Errorf("sqlite: %w %q", store.ErrInvalidCursor, cursor)
	}
	return n, id, nil
}

// Overdue lists up to limit jobs whose WatchdogTimerTs is set and at or
// before now, the most overdue first (then by id).
func (s *Store) Overdue(ctx context.Context, now time.Time, limit int) ([]string, error) {
	if limit <= 0 {
		return nil, nil
	}
	n, err := nanos(now)
	if err != nil {
		return nil, err
	}
	// "IS NOT NULL" lets SQLite use the partial index jobs_watchdog.
	rows, err := s.read.QueryContext(ctx, `SELECT id FROM jobs WHERE watchdog_ts IS NOT NULL AND watchdog_ts <= ?
		ORDER BY watchdog_ts, id LIMIT ?`, n, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// expiryQueries are Expired's two queries for a retention class: the
// occurrence of the class's newest Keep-th record, and the records before
// a cutoff. Each repeats the WHERE term of the class's partial index
// (invocations_done, invocations_failed), which is how SQLite knows it may
// use it.
func expiryQueries(failures bool) (kept, list string) {
	class := "status IN ('SUCCEEDED', 'SKIPPED')"
	if failures {
		class = "status IN ('FAILED', 'ABORTED')"
	}
	return "SELECT occurrence FROM invocations WHERE job_id = ? AND " + class + " ORDER BY occurrence DESC LIMIT 1 OFFSET ?",
		"SELECT id FROM invocations WHERE job_id = ? AND " + class + " AND occurrence < ? ORDER BY occurrence, id LIMIT ?"
}

// Expired lists up to limit of the job's finished records that r lets go,
// oldest first, through the class's partial index.
func (s *Store) Expired(ctx context.Context, jobID string, r store.Expiry, limit int) ([]string, error) {
	if limit <= 0 || (r.Before.IsZero() && r.Keep <= 0) {
		return nil, nil
	}
	keptQuery, listQuery := expiryQueries(r.Failures)
	var cutoff int64 = -1 << 63
	if !r.Before.IsZero() {
		n, err := nanos(r.Before)
		if err != nil {
			return nil, err
		}
		cutoff = n
	}
	if r.Keep > 0 {
		var kept int64
		err := s.read.QueryRowContext(ctx, keptQuery, jobID, r.Keep-1).Scan(&kept)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return nil, fmt.Errorf("sqlite: retention of %s: %w", jobID, err)
		default:
			cutoff = max(cutoff, kept)
		}
	}
	rows, err := s.read.QueryContext(ctx, listQuery, jobID, cutoff, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: retention of %s: %w", jobID, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
