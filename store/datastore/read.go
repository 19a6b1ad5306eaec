package datastore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/datastore"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sundial-cron/sundial/store"
)

// Job reads a job outside any transaction.
func (s *Store) Job(ctx context.Context, id string) (*store.JobRecord, error) {
	var e jobEntity
	if _, err := s.retry(ctx, func() error { return s.client.Get(ctx, s.jobKey(id), &e) }); err != nil {
		return nil, notFound(err, "job "+id)
	}
	return &e.JobRecord, nil
}

// Invocation reads one invocation outside any transaction.
func (s *Store) Invocation(ctx context.Context, jobID, id string) (*store.InvocationRecord, error) {
	var e invocationEntity
	if _, err := s.retry(ctx, func() error { return s.client.Get(ctx, s.invocationKey(jobID, id), &e) }); err != nil {
		return nil, notFound(err, fmt.Sprintf("invocation %s of %s", id, jobID))
	}
	return &e.InvocationRecord, nil
}

// Definition reads one of the job's stored definitions.
func (s *Store) Definition(ctx context.Context, jobID, hash string) ([]byte, error) {
	var e definitionEntity
	if _, err := s.retry(ctx, func() error { return s.client.Get(ctx, s.definitionKey(jobID, hash), &e) }); err != nil {
		return nil, notFound(err, fmt.Sprintf("definition %s of %s", hash, jobID))
	}
	return e.encoded, nil
}

func notFound(err error, what string) error {
	if errors.Is(err, datastore.ErrNoSuchEntity) {
		return store.ErrNotFound
	}
	return fmt.Errorf("datastore: reading %s: %w", what, err)
}

// Jobs lists a project's jobs (all jobs for project ""), by id. The project
// filter with the key order is served by the built-in indexes.
func (s *Store) Jobs(ctx context.Context, project string, p store.Page) ([]*store.JobRecord, string, error) {
	q := datastore.NewQuery(kindJob).Namespace(s.opts.Namespace).Order("__key__")
	if project != "" {
		q = q.FilterField("Project", "=", project)
	}
	var jobs []*store.JobRecord
	next, err := s.page(ctx, q, "j", p, func() { jobs = nil }, func(it *datastore.Iterator) error {
		var e jobEntity
		if _, err := it.Next(&e); err != nil {
			return err
		}
		jobs = append(jobs, &e.JobRecord)
		return nil
	})
	return jobs, next, err
}

// Invocations lists a job's invocations, newest occurrence first: an
// ancestor query on the job's group, sorted by the composite index
// (ancestor, Occurrence descending) that index.yaml declares. Ties keep the
// index's key order, so a cursor never skips or repeats one.
func (s *Store) Invocations(ctx context.Context, jobID string, p store.Page) ([]*store.InvocationRecord, string, error) {
	q := datastore.NewQuery(kindInvocation).Namespace(s.opts.Namespace).Ancestor(s.jobKey(jobID)).Order("-Occurrence")
	var invs []*store.InvocationRecord
	next, err := s.page(ctx, q, "i", p, func() { invs = nil }, func(it *datastore.Iterator) error {
		var e invocationEntity
		if _, err := it.Next(&e); err != nil {
			return err
		}
		invs = append(invs, &e.InvocationRecord)
		return nil
	})
	return invs, next, err
}

// page runs q for one page, calling next for each entity; on a conflict
// it calls reset and runs q again. Its cursor is Datastore's position in
// the index after the page's last entity, so the next page starts right
// after it whatever was written meanwhile, behind prefix, the listing's
// mark: Datastore takes any bytes as a cursor, and one of another listing
// could start a page anywhere.
func (s *Store) page(ctx context.Context, q *datastore.Query, prefix string, p store.Page, reset func(), next func(*datastore.Iterator) error) (string, error) {
	if p.Cursor != "" {
		cur, err := decodeCursor(prefix, p.Cursor)
		if err != nil {
			return "", err
		}
		q = q.Start(cur)
	}
	limit := p.Size()
	var cursor string
	_, err := s.retry(ctx, func() error {
		reset()
		var err error
		cursor, err = onePage(s.client.Run(ctx, q.Limit(limit+1)), limit, next)
		return err
	})
	if p.Cursor != "" && status.Code(err) == codes.InvalidArgument {
		// Bytes that decode but that Datastore cannot read as a position.
		reset()
		return "", fmt.Errorf("datastore: %w %q: %v", store.ErrInvalidCursor, p.Cursor, err)
	}
	if err != nil || cursor == "" {
		return "", err
	}
	return cursorVersion + prefix + cursor, nil
}

// cursorVersion starts every cursor, so a later format can tell this one
// apart: someone paging through an upgrade holds a cursor of the release
// before. Version 0 (313afd2 and before) has no mark and is still read; it
// starts with its listing's letter, never with the mark's digit.
const cursorVersion = "1"

// decodeCursor reads a cursor of the listing marked prefix.
func decodeCursor(prefix, cursor string) (datastore.Cursor, error) {
	enc, ok := strings.CutPrefix(strings.TrimPrefix(cursor, cursorVersion), prefix)
	cur, err := datastore.DecodeCursor(enc)
	if !ok || enc == "" || err != nil {
		return datastore.Cursor{}, fmt.Errorf("datastore: %w %q", store.ErrInvalidCursor, cursor)
	}
	return cur, nil
}

// onePage reads up to limit entities from it and returns the cursor after
// them, or "" if it holds no more. It asks for one entity more than the
// page, to tell whether there is a next page, and does not decode it.
func onePage(it *datastore.Iterator, limit int, next func(*datastore.Iterator) error) (string, error) {
	for range limit {
		if err := next(it); errors.Is(err, iterator.Done) {
			return "", nil
		} else if err != nil {
			return "", fmt.Errorf("datastore: listing: %w", err)
		}
	}
	cur, err := it.Cursor()
	if err != nil {
		return "", fmt.Errorf("datastore: page cursor: %w", err)
	}
	if _, err := it.Next(nil); errors.Is(err, iterator.Done) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("datastore: listing: %w", err)
	}
	return cur.String(), nil
}

// Overdue lists the jobs whose WatchdogTimerTs is at or before now, the
// most overdue first. It is a keys-only query on WatchdogTimerTs's built-in
// index, which holds only jobs that wait for something, so it reads one
// index entry per overdue job and no entity.
func (s *Store) Overdue(ctx context.Context, now time.Time, limit int) ([]string, error) {
	if limit <= 0 {
		return nil, nil
	}
	q := datastore.NewQuery(kindJob).Namespace(s.opts.Namespace).
		FilterField("WatchdogTimerTs", "<=", now).Order("WatchdogTimerTs").Limit(limit).KeysOnly()
	var keys []*datastore.Key
	_, err := s.retry(ctx, func() error {
		var err error
		keys, err = s.client.GetAll(ctx, q, nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("datastore: overdue jobs: %w", err)
	}
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = k.Name
	}
	return ids, nil
}

// Expired lists up to limit of the job's finished records that r lets go,
// newest of them first, through the composite index on (ancestor, Expiry,
// Occurrence desc) in index.yaml: keys-only queries, which read index
// entries and no entity. The count bound skips r.Keep entries of it.
func (s *Store) Expired(ctx context.Context, jobID string, r store.Expiry, limit int) ([]string, error) {
	if limit <= 0 || (r.Before.IsZero() && r.Keep <= 0) {
		return nil, nil
	}
	class := "done"
	if r.Failures {
		class = "failed"
	}
	base := datastore.NewQuery(kindInvocation).Namespace(s.opts.Namespace).Ancestor(s.jobKey(jobID)).
		FilterField("Expiry", "=", class).Order("-Occurrence")
	cutoff := r.Before
	if r.Keep > 0 {
		// A projection on the sorted property is served by the same index.
		q := base.Project("Occurrence").Offset(r.Keep - 1).Limit(1)
		var kept []datastore.PropertyList
		_, err := s.retry(ctx, func() error {
			kept = nil
			_, err := s.client.GetAll(ctx, q, &kept)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("datastore: retention of %s: %w", jobID, err)
		}
		if len(kept) == 1 {
			for _, p := range kept[0] {
				var at time.Time
				switch v := p.Value.(type) {
				case int64:
					// A projection gives a time as its index holds
					// it: microseconds since the epoch.
					at = time.UnixMicro(v)
				case time.Time:
					at = v
				}
				if p.Name == "Occurrence" && at.After(cutoff) {
					cutoff = at
				}
			}
		}
	}
	if cutoff.IsZero() {
		return nil, nil
	}
	q := base.FilterField("Occurrence", "<", cutoff).Limit(limit).KeysOnly()
	var keys []*datastore.Key
	_, err := s.retry(ctx, func() error {
		var err error
		keys, err = s.client.GetAll(ctx, q, nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("datastore: retention of %s: %w", jobID, err)
	}
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = k.Name
	}
	return ids, nil
}
