package datastore

import (
	"context"
	"errors"
	"fmt"

	"cloud.google.com/go/datastore"

	"github.com/sundial-cron/sundial/store"
)

// Project reads a project's record.
func (s *Store) Project(ctx context.Context, id string) (*store.ProjectRecord, error) {
	e := projectEntity{store.ProjectRecord{ID: id}}
	if _, err := s.retry(ctx, func() error { return s.client.Get(ctx, s.projectKey(id), &e) }); err != nil {
		return nil, notFound(err, "project "+id)
	}
	return &e.ProjectRecord, nil
}

// Projects lists every project's record, by id: one query of the kind,
// by key, which the built-in indexes serve.
func (s *Store) Projects(ctx context.Context) ([]*store.ProjectRecord, error) {
	q := datastore.NewQuery(kindProject).Namespace(s.opts.Namespace).Order("__key__")
	var es []*projectEntity
	_, err := s.retry(ctx, func() error {
		es = nil
		_, err := s.client.GetAll(ctx, q, &es)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("datastore: listing projects: %w", err)
	}
	out := make([]*store.ProjectRecord, len(es))
	for i, e := range es {
		out[i] = &e.ProjectRecord
	}
	return out, nil
}

// PutProject writes a project's record whole.
func (s *Store) PutProject(ctx context.Context, p *store.ProjectRecord) error {
	if p.ID == "" {
		return errors.New("datastore: a project record needs an id")
	}
	e := &projectEntity{*p}
	if _, err := s.retry(ctx, func() error { _, err := s.client.Put(ctx, s.projectKey(p.ID), e); return err }); err != nil {
		return fmt.Errorf("datastore: put project %s: %w", p.ID, err)
	}
	return nil
}

// UpdateProject reads and writes a project's record in one transaction,
// run again (as Update's are) when another writes the record in between.
func (s *Store) UpdateProject(ctx context.Context, id string, fn func(*store.ProjectRecord) (*store.ProjectRecord, error)) error {
	if id == "" {
		return errors.New("datastore: a project record needs an id")
	}
	attempts, err := s.retry(ctx, func() error { return s.updateProject(ctx, id, fn) })
	if conflict(err) {
		return fmt.Errorf("datastore: project %s: %d attempts: %w (last: %v)", id, attempts, store.ErrConflict, err)
	}
	return err
}

func (s *Store) updateProject(ctx context.Context, id string, fn func(*store.ProjectRecord) (*store.ProjectRecord, error)) error {
	key := s.projectKey(id)
	dtx, err := s.client.NewTransaction(ctx)
	if err != nil {
		return err
	}
	committed := false
	defer func() {
		if !committed {
			_ = dtx.Rollback()
		}
	}()
	var old *store.ProjectRecord
	e := projectEntity{store.ProjectRecord{ID: id}}
	switch err := dtx.Get(key, &e); {
	case errors.Is(err, datastore.ErrNoSuchEntity):
	case err != nil:
		return err
	default:
		old = &e.ProjectRecord
	}
	p, err := fn(old)
	if err != nil || p == nil {
		return err
	}
	if _, err := dtx.Put(key, &projectEntity{store.ProjectRecord{ID: id, Encoded: p.Encoded}}); err != nil {
		return err
	}
	if _, err := dtx.Commit(); err != nil {
		return err
	}
	committed = true
	return nil
}
