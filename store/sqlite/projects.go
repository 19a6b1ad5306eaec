package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/sundial-cron/sundial/store"
)

// Project reads a project's record from the last committed state.
func (s *Store) Project(ctx context.Context, id string) (*store.ProjectRecord, error) {
	p := &store.ProjectRecord{ID: id}
	err := s.read.QueryRowContext(ctx, "SELECT encoded FROM projects WHERE id = ?", id).Scan(&p.Encoded)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Projects lists every project's record, by id.
func (s *Store) Projects(ctx context.Context) ([]*store.ProjectRecord, error) {
	rows, err := s.read.QueryContext(ctx, "SELECT id, encoded FROM projects ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*store.ProjectRecord
	for rows.Next() {
		var p store.ProjectRecord
		if err := rows.Scan(&p.ID, &p.Encoded); err != nil {
			return nil, err
		}
		out = append(out, &p)
	}
	return out, rows.Err()
}

// PutProject writes a project's record whole.
func (s *Store) PutProject(ctx context.Context, p *store.ProjectRecord) error {
	if p.ID == "" {
		return errors.New("sqlite: a project record needs an id")
	}
	encoded := p.Encoded
	if encoded == nil {
		encoded = []byte{} // NOT NULL: an empty blob, read back as one
	}
	return s.write(ctx, false, nil, func(w *writer) error {
		if _, err := w.exec("INSERT INTO projects (id, encoded) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET encoded = excluded.encoded", p.ID, encoded); err != nil {
			return fmt.Errorf("sqlite: put project %s: %w", p.ID, err)
		}
		return nil
	})
}

// UpdateProject reads and writes a project's record in one write
// transaction: writes are serialised, so none comes in between.
func (s *Store) UpdateProject(ctx context.Context, id string, fn func(*store.ProjectRecord) (*store.ProjectRecord, error)) error {
	if id == "" {
		return errors.New("sqlite: a project record needs an id")
	}
	return s.write(ctx, false, nil, func(w *writer) error {
		var old *store.ProjectRecord
		var encoded []byte
		err := w.queryRow("SELECT encoded FROM projects WHERE id = ?", id).Scan(&encoded)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return fmt.Errorf("sqlite: read project %s: %w", id, err)
		default:
			old = &store.ProjectRecord{ID: id, Encoded: encoded}
		}
		p, err := fn(old)
		if err != nil || p == nil {
			return err
		}
		if p.Encoded == nil {
			p.Encoded = []byte{}
		}
		if _, err := w.exec("INSERT INTO projects (id, encoded) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET encoded = excluded.encoded", id, p.Encoded); err != nil {
			return fmt.Errorf("sqlite: put project %s: %w", id, err)
		}
		return nil
	})
}
