package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

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
		t := &tx{w: w, jobID: jobID}
		err := fn(t)
		t.ended = true
		if err == nil {
			err = t.failed
		}
		// The op may run again after a failed batch: keep the last run's.
		tasks = t.tasks
		return err
	})
	if err != nil {
		return nil, err
	}
	return tasks, nil
}

// tx is store.Tx on the committer's connection.
type tx struct {
	w      *writer
	jobID  string
	tasks  []task.Task
	failed error // the first failed write
	ended  bool  // fn has returned; a kept Tx must not write into the next request's savepoint
}

var errEnded = errors.New("sqlite: transaction used after its function returned")

func (t *tx) check() error {
	if t.ended {
		return errEnded
	}
	return nil
}

// fail records the first failed write.
func (t *tx) fail(err error) error {
	if t.failed == nil {
		t.failed = err
	}
	return err
}

func (t *tx) Job() (*store.Job, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	j, err := scanJob(t.w.queryRow("SELECT "+jobColumns+" FROM jobs WHERE id = ?", t.jobID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	return j, err
}

func (t *tx) PutJob(j *store.Job) error {
	if err := t.check(); err != nil {
		return err
	}
	if j == nil || j.ID != t.jobID {
		return t.fail(fmt.Errorf("sqlite: PutJob of another group than %q", t.jobID))
	}
	args, err := jobArgs(j)
	if err != nil {
		return t.fail(err)
	}
	_, err = t.w.exec(`INSERT INTO jobs (`+jobColumns+`) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET project = excluded.project, state = excluded.state,
			watchdog_ts = excluded.watchdog_ts, definition = excluded.definition, machine = excluded.machine`,
		args...)
	if err != nil {
		return t.fail(fmt.Errorf("sqlite: put job %s: %w", j.ID, err))
	}
	return nil
}

func (t *tx) Invocation(id string) (*store.Invocation, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	inv, err := scanInvocation(t.w.queryRow("SELECT "+invColumns+" FROM invocations WHERE job_id = ? AND id = ?", t.jobID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	return inv, err
}

func (t *tx) PutInvocation(inv *store.Invocation) error {
	if err := t.check(); err != nil {
		return err
	}
	if inv == nil || inv.JobID != t.jobID {
		return t.fail(fmt.Errorf("sqlite: PutInvocation of another group than %q", t.jobID))
	}
	args, err := invArgs(inv)
	if err != nil {
		return t.fail(err)
	}
	_, err = t.w.exec(`INSERT INTO invocations (`+invColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (job_id, id) DO UPDATE SET occurrence = excluded.occurrence, status = excluded.status,
			attempt = excluded.attempt, manual = excluded.manual, created = excluded.created,
			started = excluded.started, ended = excluded.ended, message = excluded.message, reason = excluded.reason,
			count = excluded.count, last = excluded.last, definition = excluded.definition, log = excluded.log`,
		args...)
	if err != nil {
		return t.fail(fmt.Errorf("sqlite: put invocation %s/%s: %w", inv.JobID, inv.ID, err))
	}
	return nil
}

// Enqueue inserts the task row unless a task of that name is already
// queued: a repeat is a duplicate, not a second task, and the first one's
// ETA stands. Within one transaction a repeat is not returned twice.
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
	eta, err := etaNanos(tk.ETA)
	if err != nil {
		return t.fail(err)
	}
	_, err = t.w.exec(`INSERT OR IGNORE INTO tasks (name, job_id, kind, nonce, eta, invocation, attempt)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		name, tk.JobID, string(tk.Kind), tk.Nonce, eta, tk.Invocation, tk.Attempt)
	if err != nil {
		return t.fail(fmt.Errorf("sqlite: enqueue %s: %w", name, err))
	}
	t.tasks = append(t.tasks, tk)
	return nil
}
