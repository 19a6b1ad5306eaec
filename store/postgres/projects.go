package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/sundial-cron/sundial/store"
)

func (s *Store) Project(ctx context.Context, id string) (*store.ProjectRecord, error) {
	p := store.ProjectRecord{ID: id}
	err := s.pool.QueryRow(ctx, "SELECT encoded FROM sundial.projects WHERE id = $1", id).Scan(&p.Encoded)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &p, nil
}

func (s *Store) Projects(ctx context.Context) ([]*store.ProjectRecord, error) {
	rows, err := s.pool.Query(ctx, "SELECT id, encoded FROM sundial.projects ORDER BY id")
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.ProjectRecord, error) {
		var p store.ProjectRecord
		return &p, r.Scan(&p.ID, &p.Encoded)
	})
}

func (s *Store) PutProject(ctx context.Context, p *store.ProjectRecord) error {
	if p.ID == "" {
		return errors.New("postgres: a project record needs an id")
	}
	_, err := s.pool.Exec(ctx, putProjectQuery, p.ID, notNull(p.Encoded))
	return err
}

const putProjectQuery = `INSERT INTO sundial.projects (id, encoded) VALUES ($1, $2)
	ON CONFLICT (id) DO UPDATE SET encoded = excluded.encoded`

// notNull is b for a NOT NULL column: nil is stored as empty, and read
// back as such.
func notNull(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// UpdateProject holds the project's advisory lock (a key space apart from
// the jobs': "project:" ids are no job's) while fn decides, so that a
// writer in between waits rather than being lost, record or none.
func (s *Store) UpdateProject(ctx context.Context, id string, fn func(*store.ProjectRecord) (*store.ProjectRecord, error)) error {
	if id == "" {
		return errors.New("postgres: a project record needs an id")
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", "project:"+id); err != nil {
			return fmt.Errorf("postgres: lock of project %s: %w", id, err)
		}
		var cur *store.ProjectRecord
		var enc []byte
		err := tx.QueryRow(ctx, "SELECT encoded FROM sundial.projects WHERE id = $1", id).Scan(&enc)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		default:
			cur = &store.ProjectRecord{ID: id, Encoded: enc}
		}
		next, err := fn(cur)
		if err != nil || next == nil {
			return err
		}
		_, err = tx.Exec(ctx, putProjectQuery, id, notNull(next.Encoded))
		return err
	})
}
