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
