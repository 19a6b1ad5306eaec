package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task"
)

// Updates are committed in batches: the Updates waiting when a batcher is
// free share one PostgreSQL transaction, which takes their groups' locks
// and reads their jobs in one round trip, runs their functions side by
// side (their reads share round trips: reads.go), and writes what they
// put in one statement a table with the COMMIT. A launch is two Updates
// (its tick and its outcome); a transaction and a statement of their own
// each cost both processes more than the rows they write, and at the turn
// of a busy second hundreds wait together. Alone, an Update is a batch of
// one: the round trips it had before batches.
//
// A function that fails is left out of its batch; a read the server fails
// aborts the whole transaction, and the batch is run again with each
// Update in a transaction of its own, so that one Update's fault is never
// another's.

// maxAttempts bounds how often an Update runs in a transaction
// PostgreSQL gave up (isRetryable) before it returns store.ErrConflict.
// The groups' locks make such failures rare: a concurrent first insert of
// one definition, or a deadlock where another instance locked two groups
// in another order.
const maxAttempts = 10

// maxBatch caps the Updates of one transaction, so that a batch holds its
// groups' locks (which other instances' batches may wait for) briefly.
const maxBatch = 512

// batchersOf is how many batches run at once on an instance with
// maxConns connections: one fills while another commits, and PostgreSQL
// flushes their commits' log together. Each holds a connection while it
// runs; the other half are the dispatcher's claims' and the readers'.
func batchersOf(maxConns int32) int { return max(1, int(maxConns)/2) }

var errClosed = errors.New("postgres: the store is closed")

// A pending is an Update waiting for its batch.
type pending struct {
	ctx   context.Context
	jobID string
	fn    func(store.Tx) error
	state atomic.Int32
	// alone runs it in a transaction of its own: its last batch failed.
	alone    bool
	attempts int
	done     chan outcome // buffered: a batcher never waits for the caller
}

// States of a pending: a batcher takes it or its caller withdraws it,
// whichever comes first. A taken one may be queued again.
const (
	queued int32 = iota
	taken
	withdrawn
)

type outcome struct {
	tasks    []task.Task
	err      error
	panicked bool
	panicVal any
}

// updates is the queue of pending Updates and its batchers.
type updates struct {
	mu     sync.Mutex
	queue  []*pending
	closed bool
	ready  chan struct{} // a token when the queue may be non-empty
	wg     sync.WaitGroup
	n      int // batchers
}

func (s *Store) startBatchers(n int) {
	s.pending.ready = make(chan struct{}, 1)
	s.pending.n = n
	for range n {
		s.pending.wg.Go(s.batcher)
	}
}

// stopBatchers refuses further Updates, answers those queued with
// errClosed, and waits for the batches in flight.
func (s *Store) stopBatchers() {
	q := &s.pending
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.closed = true
	left := q.queue
	q.queue = nil
	q.mu.Unlock()
	close(q.ready)
	for _, p := range left {
		if p.state.CompareAndSwap(queued, taken) {
			p.done <- outcome{err: errClosed}
		}
	}
	q.wg.Wait()
}

func (q *updates) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

func (q *updates) push(p *pending, front bool) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	if front {
		q.queue = slices.Insert(q.queue, 0, p)
	} else {
		q.queue = append(q.queue, p)
	}
	q.signal()
	return true
}

// take removes a batch from the queue: up to maxBatch Updates of distinct
// groups, in queue order (a later Update of a group in the batch waits for
// the next, which sees its writes), or one that must run alone. The
// withdrawn are dropped.
func (q *updates) take() []*pending {
	q.mu.Lock()
	defer q.mu.Unlock()
	var batch []*pending
	in := map[string]bool{}
	left := q.queue[:0]
	for i, p := range q.queue {
		switch {
		case len(batch) == maxBatch || (p.alone && len(batch) > 0) || in[p.jobID]:
			left = append(left, p)
		case p.state.CompareAndSwap(queued, taken):
			batch = append(batch, p)
			in[p.jobID] = true
			if p.alone {
				left = append(left, q.queue[i+1:]...)
				q.queue = left
				q.signalIfAny()
				return batch
			}
		}
	}
	clear(q.queue[len(left):])
	q.queue = left
	q.signalIfAny()
	return batch
}

// signalIfAny wakes another batcher for what take left.
func (q *updates) signalIfAny() {
	if len(q.queue) > 0 {
		q.signal()
	}
}

func (s *Store) batcher() {
	for range s.pending.ready {
		if batch := s.pending.take(); len(batch) > 0 {
			s.runBatch(batch)
		}
	}
}

// Submit queues an Update for a batch and returns without waiting for its
// commit.
func (s *Store) Submit(ctx context.Context, jobID string, fn func(store.Tx) error) (wait func() ([]task.Task, error)) {
	if err := ctx.Err(); err != nil {
		return func() ([]task.Task, error) { return nil, err }
	}
	p := &pending{ctx: ctx, jobID: jobID, fn: fn, done: make(chan outcome, 1)}
	if !s.pending.push(p, false) {
		return func() ([]task.Task, error) { return nil, errClosed }
	}
	return p.wait
}

// Update runs fn in a transaction that holds the advisory lock of jobID's
// group, shared with the other Updates of its batch, and commits what fn
// put with theirs.
func (s *Store) Update(ctx context.Context, jobID string, fn func(store.Tx) error) ([]task.Task, error) {
	return s.Submit(ctx, jobID, fn)()
}

// wait waits for the batch's answer. An Update withdrawn before a batcher
// took it returns ctx.Err() and never runs; once taken, the caller learns
// what happened, whatever ctx says.
func (p *pending) wait() ([]task.Task, error) {
	var o outcome
	select {
	case o = <-p.done:
	case <-p.ctx.Done():
		if p.state.CompareAndSwap(queued, withdrawn) {
			return nil, p.ctx.Err()
		}
		o = <-p.done
	}
	if o.panicked {
		panic(o.panicVal)
	}
	return o.tasks, o.err
}

// batchContext is done when every Update of the batch was given up by its
// caller: one caller's deadline must not fail the others'.
func batchContext(batch []*pending) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	left := atomic.Int64{}
	left.Store(int64(len(batch)))
	stops := make([]func() bool, len(batch))
	for i, p := range batch {
		stops[i] = context.AfterFunc(p.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// runBatch runs one batch's transaction and answers each Update in it, or
// queues them again.
func (s *Store) runBatch(batch []*pending) {
	ctx, done := batchContext(batch)
	defer done()
	ts, err := s.commitBatch(ctx, batch)
	if err == nil {
		s.commits.Add(1)
		for _, t := range ts {
			if t.failed == nil {
				s.updates.Add(1)
			}
		}
		return
	}
	for i, p := range batch {
		if ts != nil && ts[i] != nil && ts[i].answered {
			continue
		}
		s.retryOrFail(p, len(batch), err, ctx.Err() != nil)
	}
}

// retryOrFail answers an Update its batch could not commit with err, or
// queues it again: alone, if others shared its batch; as it was, if
// PostgreSQL gave the transaction up and attempts are left.
func (s *Store) retryOrFail(p *pending, batchLen int, err error, givenUp bool) {
	p.attempts++
	switch {
	case givenUp:
	case batchLen > 1:
		p.alone = true
		fallthrough
	case isRetryable(err) && p.attempts < maxAttempts:
		p.state.Store(queued)
		if s.pending.push(p, true) {
			return
		}
		err = errClosed
	case isRetryable(err):
		err = fmt.Errorf("postgres: update of %s: %w", p.jobID, store.ErrConflict)
	}
	p.done <- outcome{err: err}
}

// lockQuery takes the groups' locks ($1, their ids) in the order of their
// keys, as every batch does, so that two batches wait for each other in
// one direction only. PostgreSQL evaluates a volatile output column after
// the sort (TestLocksAreTakenInKeyOrder).
const lockQuery = `SELECT pg_advisory_xact_lock(k) FROM (SELECT hashtextextended(id, 0) AS k FROM unnest($1::text[]) AS id) ids ORDER BY k`

// commitBatch runs the batch in one transaction. It returns each Update's
// tx, answered if fn failed (or panicked) and its Update was answered so.
// A nil error means the rest committed and were answered.
func (s *Store) commitBatch(ctx context.Context, batch []*pending) (ts []*batchTx, err error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: a connection: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			// A connection left in a transaction is closed by the pool.
			conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		}
		conn.Release()
	}()
	ids := make([]string, len(batch))
	for i, p := range batch {
		ids[i] = p.jobID
	}
	// The transaction begins in the round trip that takes the locks and
	// reads the jobs: nearly every fn begins by reading its job. Two
	// statements, not one: at READ COMMITTED each statement reads as of
	// its start, and one that read the rows as it waited for the locks
	// would read them as the previous holders found them.
	var b pgx.Batch
	b.Queue("BEGIN")
	b.Queue(lockQuery, ids)
	b.Queue("SELECT "+jobColumns+" FROM sundial.jobs WHERE id = ANY($1)", ids)
	loaded, err := readLocked(conn.SendBatch(ctx, &b))
	if err != nil {
		return nil, err
	}
	for _, j := range loaded {
		s.memos.attach(j)
	}
	ts = make([]*batchTx, len(batch))
	errs := make([]error, len(batch))
	r := newReads(ctx, conn, len(batch), &s.readTrips, &s.readStatements)
	for i, p := range batch {
		t := &batchTx{tx: tx{reads: r, jobID: p.jobID, stored: &s.definitions, loaded: loaded[p.jobID], invs: map[string]*store.InvocationRecord{}}}
		ts[i] = t
		go func() {
			defer r.finished()
			errs[i] = t.run(p.fn)
		}()
	}
	r.serve()
	var w writes
	for i, t := range ts {
		if t.broken != nil {
			return ts, t.broken
		}
		if errs[i] != nil {
			t.answered = true
			batch[i].done <- t.outcome(errs[i])
			continue
		}
		w.add(&t.tx)
	}
	adoption := s.adoption.load()
	adopted, err := w.commit(ctx, conn, adoption)
	if err != nil {
		return ts, err
	}
	committed = true
	if len(adopted) > 0 {
		adoption.Adopted(adopted)
	}
	for i, p := range batch {
		t := ts[i]
		if t.answered {
			continue
		}
		for _, d := range t.defs {
			s.definitions.Put(t.jobID, d.hash)
		}
		if t.job != nil {
			s.memos.committed(t.job)
		}
		t.answered = true
		p.done <- outcome{tasks: t.tasks}
	}
	return ts, nil
}

// readLocked reads the results of the lock and the jobs' read.
func readLocked(br pgx.BatchResults) (map[string]*store.JobRecord, error) {
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, fmt.Errorf("postgres: begin: %w", err)
	}
	if _, err := br.Exec(); err != nil {
		return nil, fmt.Errorf("postgres: lock: %w", err)
	}
	rows, err := br.Query()
	if err != nil {
		return nil, fmt.Errorf("postgres: read jobs: %w", err)
	}
	loaded := map[string]*store.JobRecord{}
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("postgres: read jobs: %w", err)
		}
		loaded[j.ID] = j
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: read jobs: %w", err)
	}
	return loaded, br.Close()
}

// batchTx is one Update's tx in its batch.
type batchTx struct {
	tx
	answered bool // its Update was answered
	panicked bool
	panicVal any
}

// run runs fn once. A failure of a Tx method is the Update's, even if fn
// swallowed it.
func (t *batchTx) run(fn func(store.Tx) error) (err error) {
	defer func() {
		t.ended.Store(true)
		if r := recover(); r != nil {
			t.panicked, t.panicVal = true, r
			err = errors.New("postgres: the update's function panicked")
		}
		if err == nil {
			err = t.failed
		}
		if err != nil && t.failed == nil {
			t.failed = err
		}
	}()
	return fn(&t.tx)
}

func (t *batchTx) outcome(err error) outcome {
	return outcome{err: err, panicked: t.panicked, panicVal: t.panicVal}
}
