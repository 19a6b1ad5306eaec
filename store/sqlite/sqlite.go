// Package sqlite is the embedded store.Store: one SQLite file in WAL mode
// holding jobs, invocations, the task rows of task/local and its owners.
//
// Writes go through one committer goroutine that group-commits: the Updates
// waiting when it becomes free share one physical transaction, so a durable
// fsync is paid once per batch rather than once per Update. Each Update
// keeps its writes until its fn returns nil, so one that fails costs the
// others nothing. Reads outside transactions use a separate pool of WAL
// readers and never wait for the committer.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task/taskrows"
)

// Sync is SQLite's synchronous setting for the write connection.
type Sync int

const (
	// SyncFull makes each commit durable against power loss. It is the
	// default because a launch record that a power cut erases after the
	// target was called would let the occurrence launch twice.
	SyncFull Sync = iota
	// SyncNormal may lose the last commits on power loss (not on a crash of
	// the process): for operators who accept that (serve --sync normal),
	// and for files thrown away, such as tests' and the lab's, which in WAL
	// mode it spares every fsync but the checkpoints'.
	SyncNormal
)

func (s Sync) pragma() (string, error) {
	switch s {
	case SyncFull:
		return "FULL", nil
	case SyncNormal:
		return "NORMAL", nil
	}
	return "", fmt.Errorf("sqlite: unknown Sync %d", s)
}

// Options tune Open. The zero value is the production setting.
type Options struct {
	Synchronous Sync
	// BusyTimeout is how long a write waits for another process holding
	// the file's write lock before it fails with store.ErrConflict.
	// Default 5s.
	BusyTimeout time.Duration
	// Readers caps the read connections. Default 4.
	Readers int
}

// committerCacheKiB bounds the committer's page cache, in SQLite's
// accounting (a 4 KiB page and its header, about 4.3 KiB). Each cached
// page costs an 8 KiB slot of modernc's allocator, about twice its size
// resident. The cache fills to its bound: the committer touches pages of
// the jobs table and of the invocation indexes all over the file, and
// SQLite evicts only when the cache is full. At
// 64 MiB (until 2026-11-25) it held the whole file of 10,000 every-minute
// jobs, and the process grew from 96 to 130 MiB resident in three minutes,
// with no measured gain in lateness or CPU over 8 MiB at 10,000 or at
// 100,000 jobs: a page the cache lacks is read from the operating system's
// page cache, which holds the file anyway (docs/benchmarks.md, "Memory at
// 10,000 jobs").
const committerCacheKiB = 8192

// ErrClosed is returned by calls on a closed Store.
var ErrClosed = errors.New("sqlite: store closed")

// Store is the SQLite backend of store.Store. It is safe for concurrent use,
// and several Stores (in one process or several) may share one file.
type Store struct {
	read        *sql.DB // WAL readers, query_only
	readStmts   readStmts
	cache       rowCache
	definitions store.StoredDefinitions

	writeDB *sql.DB
	queue   queue

	ckptDB   *sql.DB       // the checkpointer's connection
	ckptWake chan struct{} // a token asks for a checkpoint
	ckptDone chan struct{} // closed when the checkpointer has returned

	quit    chan struct{}
	done    chan struct{} // closed when the committer has returned
	closing sync.Once
	closed  atomic.Bool // Close was called

	updates atomic.Uint64
	commits atomic.Uint64

	adoption atomic.Pointer[taskrows.Adoption]

	hooks testHooks
}

// testHooks let tests observe and perturb the committer. Nil in production.
type testHooks struct {
	queued func()       // an Update was queued
	commit func() error // fails a physical COMMIT when it returns an error
}

var (
	_ store.Store     = (*Store)(nil)
	_ store.Submitter = (*Store)(nil)
)

// Open opens (creating if needed) the database file at path and its schema.
// It refuses, with an error wrapping ErrDamaged, an empty file and a file
// whose pages fail SQLite's quick_check; and, wrapping ErrNewerSchema, a
// file a newer release migrated.
func Open(path string, opts Options) (*Store, error) {
	return open(path, opts, testHooks{})
}

func open(path string, opts Options, hooks testHooks) (*Store, error) {
	if path == "" || strings.ContainsRune(path, '?') {
		// The driver reads everything after '?' as connection parameters.
		return nil, fmt.Errorf("sqlite: unusable path %q", path)
	}
	syncMode, err := opts.Synchronous.pragma()
	if err != nil {
		return nil, err
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 5 * time.Second
	}
	if opts.Readers <= 0 {
		opts.Readers = 4
	}
	busy := fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds())
	if err := prepareFile(path); err != nil {
		return nil, err
	}

	// temp_store: inside the batch's transaction SQLite journals what a
	// multi-row statement changes, to undo it alone if it fails; in a
	// temporary file that costs system calls on the committer's path.
	//
	// cache_size: see committerCacheKiB.
	wq := url.Values{"_pragma": {busy, "journal_mode(WAL)", "synchronous(" + syncMode + ")", "temp_store(MEMORY)", fmt.Sprintf("cache_size(-%d)", committerCacheKiB),
		fmt.Sprintf("wal_autocheckpoint(%d)", walRestartPages)}}
	writeDB, err := sql.Open("sqlite", path+"?"+wq.Encode())
	if err != nil {
		return nil, err
	}
	// The committer's single connection is the only writer in this
	// process; a second one would only queue on SQLite's lock.
	writeDB.SetMaxOpenConns(1)
	writeDB.SetMaxIdleConns(1)
	writeDB.SetConnMaxLifetime(0)
	writeDB.SetConnMaxIdleTime(0)
	conn, err := writeDB.Conn(context.Background())
	if err != nil {
		writeDB.Close()
		if isDamage(err) {
			return nil, damaged(path, "open", err)
		}
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if err := checkIntegrity(conn, path); err != nil {
		conn.Close()
		writeDB.Close()
		return nil, err
	}
	if err := migrate(conn); err != nil {
		conn.Close()
		writeDB.Close()
		if errors.Is(err, ErrNewerSchema) {
			return nil, fmt.Errorf("sqlite: %s was %w", path, err)
		}
		return nil, fmt.Errorf("sqlite: schema of %s: %w", path, err)
	}

	rq := url.Values{"_pragma": {busy, "query_only(1)"}}
	read, err := sql.Open("sqlite", path+"?"+rq.Encode())
	if err != nil {
		conn.Close()
		writeDB.Close()
		return nil, err
	}
	read.SetMaxOpenConns(opts.Readers)
	read.SetMaxIdleConns(opts.Readers)

	cq := url.Values{"_pragma": {busy, "synchronous(" + syncMode + ")"}}
	ckpt, err := sql.Open("sqlite", path+"?"+cq.Encode())
	if err != nil {
		conn.Close()
		writeDB.Close()
		read.Close()
		return nil, err
	}
	ckpt.SetMaxOpenConns(1)
	ckpt.SetMaxIdleConns(1)

	s := &Store{
		read:     read,
		writeDB:  writeDB,
		ckptDB:   ckpt,
		ckptWake: make(chan struct{}, 1),
		ckptDone: make(chan struct{}),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
		hooks:    hooks,
	}
	if err := s.readStmts.prepare(read); err != nil {
		conn.Close()
		writeDB.Close()
		read.Close()
		ckpt.Close()
		return nil, err
	}
	s.queue.init()
	s.cache.init()
	go s.commitLoop(conn)
	go s.checkpointLoop(ckpt)
	return s, nil
}

// Close stops the committer after its current batch, fails the Updates
// still queued with ErrClosed, and closes the file.
func (s *Store) Close() error {
	s.closing.Do(func() {
		s.closed.Store(true)
		for _, r := range s.queue.close() {
			r.finish(result{err: ErrClosed})
		}
		close(s.quit)
	})
	<-s.done
	<-s.ckptDone
	return errors.Join(s.readStmts.close(), s.read.Close(), s.ckptDB.Close(), s.writeDB.Close())
}

// readStmts are the reads of every Update, prepared once per reader
// connection instead of once per call: a job's first Update reads its
// row, and one that writes nothing reads its version.
type readStmts struct {
	job     *sql.Stmt // the job row and its version
	version *sql.Stmt // the job's version
}

func (r *readStmts) prepare(db *sql.DB) error {
	var err error
	if r.job, err = db.Prepare("SELECT version, " + jobColumns + " FROM jobs WHERE id = ?"); err != nil {
		return fmt.Errorf("sqlite: prepare: %w", err)
	}
	if r.version, err = db.Prepare("SELECT version FROM jobs WHERE id = ?"); err != nil {
		r.job.Close()
		return fmt.Errorf("sqlite: prepare: %w", err)
	}
	return nil
}

func (r *readStmts) close() error { return errors.Join(r.job.Close(), r.version.Close()) }

// Stats are counters since Open.
type Stats struct {
	Updates uint64 // committed Update calls
	Commits uint64 // physical COMMITs, of Updates and of task-row writes
}

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	return Stats{Updates: s.updates.Load(), Commits: s.commits.Load()}
}

// isBusy reports whether err is SQLite giving up on a lock held by another
// connection (after busy_timeout).
func isBusy(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	code := se.Code() & 0xff
	return code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED
}
