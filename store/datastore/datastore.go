// Package datastore is the cloud shape's store.Store, on Cloud Datastore
// (Firestore in Datastore mode).
//
// A Job entity is the root of its entity group and its Invocations are its
// children, so a transaction never spans two jobs. Cloud Tasks cannot join a
// Datastore transaction: Tx.Enqueue collects the tasks and Update returns
// them once the commit succeeded, for task.Queue.Post to create. Only the
// properties queries need are indexed; the composite index the invocation
// listing needs is declared in the repository's index.yaml.
package datastore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"cloud.google.com/go/datastore"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task"
)

// Options configure a Store.
type Options struct {
	// Namespace keeps the store's entities apart from others' in one
	// database; "" is the default namespace.
	Namespace string
	// MaxAttempts bounds how often Update runs a transaction that keeps
	// conflicting before it returns store.ErrConflict; 0 means 8.
	MaxAttempts int
}

// Store is a store.Store on a Datastore client.
type Store struct {
	client      *datastore.Client
	opts        Options
	definitions storedDefinitions
	// afterMigrationRead, set only by tests, runs in a migration's
	// transactions (MigrateExpiry, MigrateListing) between their reads
	// and their writes, where a concurrent change would land.
	afterMigrationRead func()
}

var (
	_ store.Store     = (*Store)(nil)
	_ store.Submitter = (*Store)(nil)
)

// New returns a store on client. Close closes the client.
func New(client *datastore.Client, opts Options) *Store {
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 8
	}
	return &Store{client: client, opts: opts}
}

// Close closes the Datastore client.
func (s *Store) Close() error { return s.client.Close() }

// Submit runs Update on a goroutine of its own (store.Submitter): each of
// a job's transactions is a round trip to Datastore, so a caller with many
// in flight has them commit side by side.
func (s *Store) Submit(ctx context.Context, jobID string, fn func(store.Tx) error) (wait func() ([]task.Task, error)) {
	type answer struct {
		tasks    []task.Task
		err      error
		panicked any
	}
	done := make(chan answer, 1)
	go func() {
		var a answer
		// A panic in fn is raised where the answer is waited for, as
		// Update raises it in its caller.
		defer func() {
			a.panicked = recover()
			done <- a
		}()
		a.tasks, a.err = s.Update(ctx, jobID, fn)
	}()
	return func() ([]task.Task, error) {
		a := <-done
		if a.panicked != nil {
			panic(a.panicked)
		}
		return a.tasks, a.err
	}
}

// Update runs fn in a Datastore transaction on the job's entity group and
// runs it again on a conflict, up to MaxAttempts times. The writes fn makes
// are buffered and sent with the commit; a transaction that wrote nothing
// is rolled back instead, which costs no commit.
func (s *Store) Update(ctx context.Context, jobID string, fn func(store.Tx) error) ([]task.Task, error) {
	if jobID == "" {
		return nil, errors.New("datastore: Update of an empty job id")
	}
	var tasks []task.Task
	attempts, err := s.retry(ctx, func() error {
		var err error
		tasks, err = s.attempt(ctx, jobID, fn)
		return err
	})
	if conflict(err) {
		return nil, fmt.Errorf("datastore: job %s: %d attempts: %w (last: %v)", jobID, attempts, store.ErrConflict, err)
	}
	return tasks, err
}

// retry calls fn until it returns anything but a conflict, at most
// MaxAttempts times, with a jittered exponential backoff between calls. It
// returns how often it called fn.
func (s *Store) retry(ctx context.Context, fn func() error) (int, error) {
	backoff := 10 * time.Millisecond
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return attempt - 1, err
		}
		err := fn()
		if !conflict(err) || attempt == s.opts.MaxAttempts {
			return attempt, err
		}
		// Full jitter spreads the retries of many contenders over the
		// interval, so they do not all collide again.
		select {
		case <-ctx.Done():
			return attempt, ctx.Err()
		case <-time.After(rand.N(backoff) + time.Millisecond):
		}
		backoff = min(2*backoff, time.Second)
	}
}

func (s *Store) attempt(ctx context.Context, jobID string, fn func(store.Tx) error) ([]task.Task, error) {
	// BeginLater starts the transaction with its first read instead of a
	// round trip of its own.
	dtx, err := s.client.NewTransaction(ctx, datastore.BeginLater)
	if err != nil {
		return nil, err
	}
	committed := false
	defer func() {
		if !committed {
			// Releases the transaction's locks now rather than when it
			// expires, also when fn panics.
			_ = dtx.Rollback()
		}
	}()
	t := &tx{ctx: ctx, s: s, dtx: dtx, jobID: jobID}
	if err := fn(t); err != nil {
		return nil, err
	}
	if t.refused != nil {
		// fn swallowed the refusal of a write; committing the rest would
		// write part of what fn meant.
		return nil, t.refused
	}
	if !t.dirty() {
		t.committed()
		return t.tasks, nil
	}
	if err := t.flush(); err != nil {
		return nil, err
	}
	if _, err := dtx.Commit(); err != nil {
		return nil, err
	}
	committed = true
	t.committed()
	return t.tasks, nil
}

// storedDefinitions knows, per job, the hash of the definition it last
// stored or found stored. A stored definition is never replaced nor
// deleted, so this is a fact, not a guess; retention that deletes
// definitions must keep the job's current one, the one its new invocations
// put. It holds one entry per job that created an invocation since New.
type storedDefinitions struct{ m sync.Map } // job id -> hash

func (d *storedDefinitions) stored(jobID, hash string) bool {
	v, ok := d.m.Load(jobID)
	return ok && v.(string) == hash
}

func (d *storedDefinitions) put(jobID, hash string) { d.m.Store(jobID, hash) }

// conflict tells a call that lost to a concurrent transaction: Datastore
// reports it at a commit, and Firestore in Datastore mode may report it at
// any read, in a transaction or not, as Aborted ("too much contention").
func conflict(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, datastore.ErrConcurrentTransaction) {
		return true
	}
	st, ok := status.FromError(err)
	return ok && st.Code() == codes.Aborted
}
