// Package postgres is the store.Store of the PostgreSQL shape: jobs,
// invocations, projects and the task rows of task/local's dispatchers in
// one PostgreSQL database, which any number of Sundial instances share.
//
// A job's entity group is serialized by a transaction-scoped advisory lock
// on its id, taken first in every Update, so that transactions of one
// group (whichever instance runs them) follow one another while those of
// different groups run side by side at READ COMMITTED, and a job that does
// not exist yet is locked as well as one that does. An Update's writes are
// kept until its function returns nil, then sent in one batch with the
// commit. The tasks it enqueues are rows of the same transaction.
//
// Locks are transaction-scoped (no session advisory lock, no LISTEN on
// the pool's connections), so the store works behind PgBouncer in
// transaction mode. Statements are prepared by name on each connection,
// pgx's default, which saves PostgreSQL planning each of them again
// (measured: 10 s of 25 s of statement time at 10,000 jobs): PgBouncer
// keeps them across its server connections from 1.21 on
// (max_prepared_statements); with an older one, the URL's
// default_query_exec_mode=cache_describe asks for unnamed statements
// instead. Only the wake-ups of Listen need a session of their own.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task/taskrows"
)

// Options tune Open. The zero value is the production setting.
type Options struct {
	// MaxConns bounds the connections of the instance's pool. Default
	// DefaultMaxConns.
	MaxConns int32
}

// DefaultMaxConns is Options.MaxConns' default: half run batches of
// Updates, the other half the dispatcher's claims and the API's reads.
// Each connection is a PostgreSQL backend process, with its own caches of
// the catalog and of the prepared statements, and fewer batchers make
// fuller batches: at 1,000, 10,000 and 100,000 every-minute jobs, 4
// connections cost less CPU (1.32 against 1.53, 0.516 against 0.533,
// 0.478 against 0.538 s per 1,000 launches) and less of PostgreSQL's
// memory (60, 99, 206 MiB against 72, 114, 232) than 8, with lateness as
// low (docs/benchmarks.md). A server's max_connections (100 by default)
// bounds the sum over the instances.
const DefaultMaxConns = 4

// Store is the PostgreSQL backend of store.Store and of taskrows.Rows. It
// is safe for concurrent use.
type Store struct {
	pool        *pgxpool.Pool
	adoption    adoptionSlot
	definitions store.StoredDefinitions
	memos       memos   // memos.go
	pending     updates // group.go

	updates, commits, readTrips, readStatements atomic.Uint64
}

// Stats are counters since Open, for the lab's benchmarks and /metrics.
type Stats struct {
	Updates uint64 // committed Update calls
	Commits uint64 // committed transactions: batches of Updates, and the task rows' claims, acknowledgements and heartbeats
	// ReadTrips counts the round trips of the reads Updates' functions
	// made, each shared by the reads of one batch asked together.
	ReadTrips uint64
	// ReadStatements counts the statements of those round trips.
	ReadStatements uint64
}

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	return Stats{Updates: s.updates.Load(), Commits: s.commits.Load(), ReadTrips: s.readTrips.Load(), ReadStatements: s.readStatements.Load()}
}

// PoolStat returns the state of the store's connections, for /metrics:
// how many are in use, how often a caller waited for one.
func (s *Store) PoolStat() *pgxpool.Stat { return s.pool.Stat() }

var (
	_ store.Store     = (*Store)(nil)
	_ store.Submitter = (*Store)(nil)
	_ taskrows.Rows   = (*Store)(nil)
)

// Open connects to the database at url, brings its schema to this
// release's version (Migrate), and returns the store. It refuses, with an
// error wrapping ErrNewerSchema, a database a newer release migrated.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: the database URL: %w", redact(err))
	}
	cfg.MaxConns = DefaultMaxConns
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", redact(err))
	}
	if err := Migrate(ctx, pool, nil); err != nil {
		pool.Close()
		return nil, err
	}
	s := &Store{pool: pool}
	s.startBatchers(batchersOf(cfg.MaxConns))
	return s, nil
}

// Close answers the Updates still queued with an error, waits for the
// batches in flight, and closes the pool.
func (s *Store) Close() error {
	s.stopBatchers()
	s.pool.Close()
	return nil
}

// Pool is the store's connection pool, for what shares its database: the
// passes' turns, the sign-in's revocations.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// redact drops a connection string's password from an error that quotes
// it: the error is logged.
func redact(err error) error {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		return errors.New("it does not parse (the URL is left out of this message: it may hold a password)")
	}
	return err
}

// isRetryable reports whether err is PostgreSQL giving up a transaction
// that may succeed if run again: a serialization failure, a deadlock, or
// a unique violation by a concurrent insert of the same key.
func isRetryable(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "40001", "40P01", "23505":
		return true
	}
	return false
}
