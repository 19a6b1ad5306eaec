package postgres

import (
	"context"
	"testing"

	"github.com/sundial-cron/sundial/internal/pgtest"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/store/storetest"
	"github.com/sundial-cron/sundial/task/taskrows/rowstest"
)

// open opens a store on a new database of the tests' server.
func open(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.Context(), pgtest.Shared(t).Database(t), Options{MaxConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store { return open(t) })
}

func TestRowsConformance(t *testing.T) {
	t.Parallel()
	rowstest.Run(t, func(t *testing.T) rowstest.Store { return open(t) })
}

// StoredBytes is what the tables of schema sundial take on disk, their
// indexes and TOAST included (storetest.Footprint).
func (s *Store) StoredBytes(ctx context.Context) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'sundial' AND c.relkind = 'r'`).Scan(&n)
	return n, err
}
