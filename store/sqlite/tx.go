package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task"
)

// Update runs fn in a transaction on jobID's group and commits it if fn
// returns nil; see store.Store.
//
// fn runs on the committer goroutine, inside a physical transaction that
// it shares with other Updates: it must be quick and must do no I/O
// outside tx, or every writer of the file waits for it (and calling this
// Store's writes from fn deadlocks). Updates queued together run one
// after another in the order they were queued, each seeing the writes of
// those before it.
//
// A Put or Enqueue that failed fails the Update even if fn ignores the
// error, so a half-written transaction never commits. ctx only withdraws
// an Update that has not started; once fn runs, Update reports what
// happened.
func (s *Store) Update(ctx context.Context, jobID string, fn func(store.Tx) error) ([]task.Task, error) {
	var tasks []task.Task
	err := s.write(ctx, true, func(w *writer) error {
		t := &tx{w: w, jobID: jobID, invs: map[string]*store.Invocation{}}
		err := fn(t)
		t.ended = true
		if err == nil {
			err = t.failed
		}
		if err != nil {
			if t.broken {
				return err
			}
			return &rejected{err}
		}
		if err := t.apply(); err != nil {
			return err
		}
		// The op may run again after a failed batch: keep the last run's.
		tasks = t.tasks
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tasks, nil
}

// tx is store.Tx on the committer's connection. It keeps its writes until
// fn returns nil and only then applies them, so that an fn that fails
// costs its batch nothing: no savepoint to take and roll back (which,
// measured, was most of an Update's cost) and nothing to undo.
type tx struct {
	w     *writer
	jobID string

	job      *store.Job // PutJob's, if any
	invs     map[string]*store.Invocation
	invOrder []string
	tasks    []task.Task

	// What the transaction read of rows that exist: the job's project and
	// the invocations' occurrences. A row written back with these
	// unchanged is updated without them, so SQLite leaves the indexes
	// over them (jobs_project, invocations_newest) alone: it rewrites an
	// index entry for every indexed column an UPDATE sets, equal or not,
	// and those entries sit on random pages, each one more page for the
	// commit to write.
	readProject string
	readJob     bool
	readOcc     map[string]time.Time

	failed error // the first failed call
	broken bool  // a statement failed: SQLite may have undone the whole batch
	ended  bool  // fn has returned; a kept Tx must not write into the next request
}

var errEnded = errors.New("sqlite: transaction used after its function returned")

func (t *tx) check() error {
	if t.ended {
		return errEnded
	}
	return nil
}

// fail records the first failed call.
func (t *tx) fail(err error) error {
	if t.failed == nil {
		t.failed = err
	}
	return err
}

func cloneJob(j *store.Job) *store.Job {
	c := *j
	c.Definition, c.Machine = bytes.Clone(j.Definition), bytes.Clone(j.Machine)
	return &c
}

func cloneInvocation(inv *store.Invocation) *store.Invocation {
	c := *inv
	c.Definition, c.Log = bytes.Clone(inv.Definition), bytes.Clone(inv.Log)
	return &c
}

func (t *tx) Job() (*store.Job, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	if t.job != nil {
		return cloneJob(t.job), nil
	}
	j, err := scanJob(t.w.queryRow("SELECT "+jobColumns+" FROM jobs WHERE id = ?", t.jobID))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, store.ErrNotFound
	case err != nil:
		t.broken = true
		return nil, t.fail(fmt.Errorf("sqlite: read job %s: %w", t.jobID, err))
	}
	t.readJob, t.readProject = true, j.Project
	return j, nil
}

func (t *tx) PutJob(j *store.Job) error {
	if err := t.check(); err != nil {
		return err
	}
	if j == nil || j.ID != t.jobID {
		return t.fail(fmt.Errorf("sqlite: PutJob of another group than %q", t.jobID))
	}
	// Encoding now reports a bad value to the caller of PutJob.
	if _, err := jobArgs(j); err != nil {
		return t.fail(err)
	}
	t.job = cloneJob(j)
	return nil
}

func (t *tx) Invocation(id string) (*store.Invocation, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	if inv, ok := t.invs[id]; ok {
		return cloneInvocation(inv), nil
	}
	inv, err := scanInvocation(t.w.queryRow("SELECT "+invColumns+" FROM invocations WHERE job_id = ? AND id = ?", t.jobID, id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, store.ErrNotFound
	case err != nil:
		t.broken = true
		return nil, t.fail(fmt.Errorf("sqlite: read invocation %s/%s: %w", t.jobID, id, err))
	}
	if t.readOcc == nil {
		t.readOcc = map[string]time.Time{}
	}
	t.readOcc[id] = inv.Occurrence
	return inv, nil
}

func (t *tx) PutInvocation(inv *store.Invocation) error {
	if err := t.check(); err != nil {
		return err
	}
	if inv == nil || inv.JobID != t.jobID {
		return t.fail(fmt.Errorf("sqlite: PutInvocation of another group than %q", t.jobID))
	}
	if _, err := invArgs(inv); err != nil {
		return t.fail(err)
	}
	if _, ok := t.invs[inv.ID]; !ok {
		t.invOrder = append(t.invOrder, inv.ID)
	}
	t.invs[inv.ID] = cloneInvocation(inv)
	return nil
}

// Enqueue adds the task unless a task of that name is already queued: a
// repeat is a duplicate, not a second task, and the first one's ETA
// stands. Within one transaction a repeat is not returned twice.
func (t *tx) Enqueue(tk task.Task) error {
	if err := t.check(); err != nil {
		return err
	}
	name := tk.Name()
	for _, q := range t.tasks {
		if q.Name() == name {
			return nil
		}
	}
	if _, err := etaNanos(tk.ETA); err != nil {
		return t.fail(err)
	}
	t.tasks = append(t.tasks, tk)
	return nil
}

// apply writes what fn put and enqueued.
func (t *tx) apply() error {
	if t.job != nil {
		args, err := jobArgs(t.job)
		switch {
		case err != nil:
		case t.readJob && t.readProject == t.job.Project:
			err = t.updateOne(`UPDATE jobs SET state = ?, watchdog_ts = ?, definition = ?, machine = ? WHERE id = ?`,
				args[2], args[3], args[4], args[5], args[0])
		default:
			_, err = t.w.exec(`INSERT INTO jobs (`+jobColumns+`) VALUES (?, ?, ?, ?, ?, ?)
				ON CONFLICT (id) DO UPDATE SET project = excluded.project, state = excluded.state,
					watchdog_ts = excluded.watchdog_ts, definition = excluded.definition, machine = excluded.machine`,
				args...)
		}
		if err != nil {
			return fmt.Errorf("sqlite: put job %s: %w", t.jobID, err)
		}
	}
	for _, id := range t.invOrder {
		inv := t.invs[id]
		args, err := invArgs(inv)
		occ, read := t.readOcc[id]
		switch {
		case err != nil:
		case read && occ.Equal(inv.Occurrence):
			err = t.updateOne(`UPDATE invocations SET status = ?, attempt = ?, manual = ?, created = ?, started = ?, ended = ?,
					message = ?, reason = ?, count = ?, last = ?, definition = ?, log = ?
				WHERE job_id = ? AND id = ?`,
				append(args[3:15:15], args[0], args[1])...)
		default:
			_, err = t.w.exec(`INSERT INTO invocations (`+invColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (job_id, id) DO UPDATE SET occurrence = excluded.occurrence, status = excluded.status,
					attempt = excluded.attempt, manual = excluded.manual, created = excluded.created,
					started = excluded.started, ended = excluded.ended, message = excluded.message, reason = excluded.reason,
					count = excluded.count, last = excluded.last, definition = excluded.definition, log = excluded.log`,
				args...)
		}
		if err != nil {
			return fmt.Errorf("sqlite: put invocation %s/%s: %w", t.jobID, id, err)
		}
	}
	for _, tk := range t.tasks {
		eta, err := etaNanos(tk.ETA)
		if err == nil {
			_, err = t.w.exec(`INSERT OR IGNORE INTO tasks (name, job_id, kind, nonce, eta, invocation, attempt)
				VALUES (?, ?, ?, ?, ?, ?, ?)`,
				tk.Name(), tk.JobID, string(tk.Kind), tk.Nonce, eta, tk.Invocation, tk.Attempt)
		}
		if err != nil {
			return fmt.Errorf("sqlite: enqueue %s: %w", tk.Name(), err)
		}
	}
	return nil
}

// updateOne runs an UPDATE of a row the transaction read, which must still
// be there: the read and the write are in one physical transaction.
func (t *tx) updateOne(query string, args ...any) error {
	res, err := t.w.exec(query, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("sqlite: updated %d rows, want 1 (%v)", n, err)
	}
	return nil
}
