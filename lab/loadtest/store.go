package loadtest

import (
	"context"
	"os"
	"path/filepath"

	"github.com/sundial-cron/sundial/internal/pgtest"
	"github.com/sundial-cron/sundial/lab/loadtest/measure"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/store/postgres"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/task/taskrows"
)

// benchStore is the store a run measures, with its task rows, and what the
// report reads of it.
type benchStore struct {
	rowStore
	stats func() storeStats
	// another opens one more store on the same database, for one more
	// instance, whose counters stats then counts too; nil for SQLite.
	another func(ctx context.Context) (rowStore, error)
	// pgPID is the private PostgreSQL server's postmaster, 0 for none.
	pgPID int
	close func()
}

type rowStore interface {
	store.Store
	store.Submitter
	taskrows.Rows
}

// storeStats are a store's counters.
type storeStats struct{ Updates, Commits uint64 }

// pgCPU is the private PostgreSQL server's CPU seconds so far; 0 without
// one.
func (b *benchStore) pgCPU() float64 {
	if b.pgPID == 0 {
		return 0
	}
	return measure.TreeCPU(b.pgPID)
}

// openStore opens the store opts name: a SQLite file (a temporary one for
// DB ""), or a PostgreSQL database (a private server's for DatabaseURL "").
func openStore(ctx context.Context, opts Options) (*benchStore, error) {
	if !opts.Postgres {
		path, cleanup := opts.DB, func() {}
		if path == "" {
			dir, err := os.MkdirTemp("", "sundial-bench-")
			if err != nil {
				return nil, err
			}
			path, cleanup = filepath.Join(dir, "bench.db"), func() { os.RemoveAll(dir) }
		}
		st, err := sqlite.Open(path, sqlite.Options{Synchronous: opts.Sync})
		if err != nil {
			cleanup()
			return nil, err
		}
		return &benchStore{
			rowStore: st,
			stats:    func() storeStats { s := st.Stats(); return storeStats{s.Updates, s.Commits} },
			close:    func() { st.Close(); cleanup() },
		}, nil
	}
	url, pgPID, stop := opts.DatabaseURL, 0, func() {}
	if url == "" {
		srv, err := pgtest.Start(true)
		if err != nil {
			return nil, err
		}
		url, pgPID, stop = srv.URL, srv.PID(), func() { srv.Close() }
	}
	st, err := postgres.Open(ctx, url, postgres.Options{MaxConns: opts.MaxConns})
	if err != nil {
		stop()
		return nil, err
	}
	all := []*postgres.Store{st}
	b := &benchStore{
		rowStore: st,
		stats: func() storeStats {
			var sum storeStats
			for _, s := range all {
				c := s.Stats()
				sum.Updates, sum.Commits = sum.Updates+c.Updates, sum.Commits+c.Commits
			}
			return sum
		},
		pgPID: pgPID,
		close: func() {
			for _, s := range all {
				s.Close()
			}
			stop()
		},
	}
	b.another = func(ctx context.Context) (rowStore, error) {
		s, err := postgres.Open(ctx, url, postgres.Options{MaxConns: opts.MaxConns})
		if err == nil {
			all = append(all, s)
		}
		return s, err
	}
	return b, nil
}
