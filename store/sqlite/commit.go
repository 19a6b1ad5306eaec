package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/sundial-cron/sundial/store"
)

// maxBatch caps how many writes share one physical transaction, so one
// batch's COMMIT (and a retry of it one by one) stays short. Writes that
// share a commit share its pages: defining 100,000 new jobs
// (BenchmarkDefine) went from about 5,000 to 7,000 a second when the cap
// went from 256 to 1,024.
const maxBatch = 1024

// A request is one write waiting for the committer: an Update, or one of
// the task-row writes of task/local.
type request struct {
	ctx      context.Context
	op       func(*writer) error
	isUpdate bool // counted in Stats.Updates
	// deferrable: no target call waits for it (store.Deferrable).
	deferrable bool
	onCommit   func() // if not nil, run by the committer once op's writes committed
	state      atomic.Int32
	done       chan result // buffered: the committer never waits for the caller
}

// States of a request: the committer takes it or its caller withdraws it,
// whichever comes first.
const (
	queued int32 = iota
	taken
	withdrawn
)

type result struct {
	err      error
	clean    bool // the op failed before writing anything
	panicked bool
	panicVal any
}

// rejected wraps the error of an op that failed before it wrote anything:
// the batch it is in can still commit the others.
type rejected struct{ err error }

func (r *rejected) Error() string { return r.err.Error() }

func (r *request) finish(res result) { r.done <- res }

// committed counts a committed Update and runs its onCommit.
func (s *Store) committed(r *request) {
	if r.isUpdate {
		s.updates.Add(1)
	}
	if r.onCommit != nil {
		r.onCommit()
	}
}

// queue holds the requests not yet taken by the committer, the
// deferrable ones apart: a batch of the others commits sooner than one
// that also runs them, and every launch waits for its batch. A deferrable
// request waits for at most one batch taken ahead of it.
type queue struct {
	mu         sync.Mutex
	reqs       []*request
	later      []*request // deferrable
	passedOver bool       // the last batch left deferrable requests waiting
	closed     bool
	ready      chan struct{} // a token when reqs or later may be non-empty
}

func (q *queue) init() { q.ready = make(chan struct{}, 1) }

func (q *queue) push(r *request) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	if r.deferrable {
		q.later = append(q.later, r)
	} else {
		q.reqs = append(q.reqs, r)
	}
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return true
}

// settle yields the committer's processor until a yield brings no new
// request, at most maxYields times. The first caller's send put the
// committer next in line on its P, ahead of the callers about to queue
// theirs: letting those run first turns a stream of lone commits into
// batches, and costs a lone Update a reschedule or two.
func (q *queue) settle() {
	n := q.len()
	for range maxYields {
		runtime.Gosched()
		m := q.len()
		if m == n {
			return
		}
		n = m
	}
}

const maxYields = 8

func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.reqs) + len(q.later)
}

// take removes up to max requests that their callers have not withdrawn,
// the deferrable ones only if no other waits or if the last batch passed
// them over.
func (q *queue) take(max int) []*request {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []*request
	out, q.reqs = takeFrom(q.reqs, out, max)
	if len(out) > 0 && !q.passedOver {
		q.passedOver = len(q.later) > 0
		return out
	}
	out, q.later = takeFrom(q.later, out, max)
	q.passedOver = false
	return out
}

// takeFrom appends to out the requests of reqs not withdrawn, up to max in
// all, and returns it with what is left of reqs.
func takeFrom(reqs, out []*request, max int) ([]*request, []*request) {
	i := 0
	for ; i < len(reqs) && len(out) < max; i++ {
		if reqs[i].state.CompareAndSwap(queued, taken) {
			out = append(out, reqs[i])
		}
	}
	return out, append(reqs[:0], reqs[i:]...)
}

// close refuses further requests and returns those still waiting.
func (q *queue) close() []*request {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	var out []*request
	out, q.reqs = takeFrom(q.reqs, out, math.MaxInt)
	out, q.later = takeFrom(q.later, out, math.MaxInt)
	return out
}

// write queues op for the committer and waits for its answer. A request
// withdrawn before the committer took it returns ctx.Err() and never runs.
// Once taken, it runs and commits (or not) whatever ctx says: the caller
// must learn what happened.
//
// onCommit, if not nil, runs on the committer right after the COMMIT that
// made op's writes durable, before the answer.
func (s *Store) write(ctx context.Context, isUpdate bool, onCommit func(), op func(*writer) error) error {
	r, err := s.push(ctx, isUpdate, onCommit, op)
	if err != nil {
		return err
	}
	return r.wait()
}

// push queues op for the committer; see write.
func (s *Store) push(ctx context.Context, isUpdate bool, onCommit func(), op func(*writer) error) (*request, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &request{ctx: ctx, op: op, isUpdate: isUpdate, deferrable: store.IsDeferrable(ctx), onCommit: onCommit, done: make(chan result, 1)}
	if !s.queue.push(r) {
		return nil, ErrClosed
	}
	if s.hooks.queued != nil {
		s.hooks.queued()
	}
	return r, nil
}

// wait waits for the committer's answer to a pushed request; see write.
func (r *request) wait() error {
	var res result
	select {
	case res = <-r.done:
	case <-r.ctx.Done():
		if r.state.CompareAndSwap(queued, withdrawn) {
			return r.ctx.Err()
		}
		res = <-r.done
	}
	if res.panicked {
		// fn panicked on the committer goroutine; panic where it was called.
		panic(res.panicVal)
	}
	return res.err
}

// writer is the committer's connection. Only the committer goroutine uses
// it.
type writer struct {
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
}

// Statements run with a background context: interrupting one inside an
// explicit transaction may roll back the whole transaction, which holds
// other callers' writes too.
func (w *writer) stmt(query string) (*sql.Stmt, error) {
	if st, ok := w.stmts[query]; ok {
		return st, nil
	}
	st, err := w.conn.PrepareContext(context.Background(), query)
	if err != nil {
		return nil, err
	}
	w.stmts[query] = st
	return st, nil
}

func (w *writer) exec(query string, args ...any) (sql.Result, error) {
	st, err := w.stmt(query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(context.Background(), args...)
}

func (w *writer) query(query string, args ...any) (*sql.Rows, error) {
	st, err := w.stmt(query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(context.Background(), args...)
}

func (w *writer) queryRow(query string, args ...any) *sql.Row {
	st, err := w.stmt(query)
	if err != nil {
		// A Row cannot be made from an error; an unprepared query
		// reports the same error through the Row.
		return w.conn.QueryRowContext(context.Background(), query, args...)
	}
	return st.QueryRowContext(context.Background(), args...)
}

func (s *Store) commitLoop(conn *sql.Conn) {
	defer close(s.done)
	w := &writer{conn: conn, stmts: map[string]*sql.Stmt{}}
	defer func() {
		for _, st := range w.stmts {
			st.Close()
		}
		conn.Close()
	}()
	for {
		// Take whatever is waiting, and never wait for more: a lone
		// Update commits at once, and batches form only under load.
		batch := s.queue.take(maxBatch)
		if len(batch) > 0 {
			s.runBatch(w, batch)
			continue
		}
		select {
		case <-s.queue.ready:
			s.queue.settle()
		case <-s.quit:
			return
		}
	}
}

// runBatch commits batch in one physical transaction. An Update whose fn
// fails has written nothing (its writes are buffered until fn returns
// nil), so it is answered alone and the batch goes on; any other failure
// may have left writes in the transaction, so the batch is undone and
// every request gets a transaction of its own.
func (s *Store) runBatch(w *writer, batch []*request) {
	live := batch[:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.finish(result{err: err})
			continue
		}
		live = append(live, r)
	}
	switch len(live) {
	case 0:
		return
	case 1:
		s.runAlone(w, live[0])
		return
	}
	if _, err := w.exec("BEGIN IMMEDIATE"); err != nil {
		err = lockErr("begin", err)
		for _, r := range live {
			r.finish(result{err: err})
		}
		return
	}
	results := make([]result, len(live))
	broken := false
	for i, r := range live {
		results[i] = runOp(w, r)
		if results[i].err != nil && !results[i].clean {
			// Stop at once: SQLite may even have rolled the transaction
			// back, and further statements would then autocommit.
			broken = true
			break
		}
	}
	if !broken {
		if err := s.commit(w); err == nil {
			s.commits.Add(1)
			s.wakeCheckpointer()
			for i, r := range live {
				if results[i].err == nil {
					s.committed(r)
				}
			}
			for i, r := range live {
				r.finish(results[i])
			}
			return
		}
	}
	// The batch did not commit. A clean failure keeps its answer; every
	// other request runs again on its own (ops may run again by contract).
	_, _ = w.exec("ROLLBACK")
	for i, r := range live {
		if results[i].err != nil && results[i].clean {
			r.finish(results[i])
			continue
		}
		s.runAlone(w, r)
	}
}

// runAlone runs one request in its own physical transaction.
func (s *Store) runAlone(w *writer, r *request) {
	if _, err := w.exec("BEGIN IMMEDIATE"); err != nil {
		r.finish(result{err: lockErr("begin", err)})
		return
	}
	res := runOp(w, r)
	if res.err != nil {
		if _, err := w.exec("ROLLBACK"); err != nil {
			// The op's own error says why; the rollback failing too means
			// the transaction had already been undone by SQLite.
			res.err = errors.Join(res.err, err)
		}
		r.finish(res)
		return
	}
	if err := s.commit(w); err != nil {
		_, _ = w.exec("ROLLBACK")
		r.finish(result{err: lockErr("commit", err)})
		return
	}
	s.commits.Add(1)
	s.wakeCheckpointer()
	s.committed(r)
	r.finish(res)
}

func (s *Store) commit(w *writer) error {
	if s.hooks.commit != nil {
		if err := s.hooks.commit(); err != nil {
			return err
		}
	}
	_, err := w.exec("COMMIT")
	return err
}

// runOp runs r's op, turning a panic into a failed result that write
// re-raises on the caller's goroutine.
func runOp(w *writer, r *request) (res result) {
	defer func() {
		if p := recover(); p != nil {
			res = result{err: fmt.Errorf("sqlite: transaction function panicked: %v", p), panicked: true, panicVal: p}
		}
	}()
	err := r.op(w)
	var rj *rejected
	if errors.As(err, &rj) {
		return result{err: rj.err, clean: true}
	}
	return result{err: err}
}

// lockErr wraps a failed BEGIN or COMMIT, as store.ErrConflict when another
// connection held the lock past busy_timeout.
func lockErr(what string, err error) error {
	if isBusy(err) {
		return fmt.Errorf("sqlite: %s: %w: %w", what, store.ErrConflict, err)
	}
	return fmt.Errorf("sqlite: %s: %w", what, err)
}
