package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/taskrows"
)

// Update runs fn in a transaction on jobID's group and commits it if fn
// returns nil; see store.Store.
//
// fn first runs on the caller's goroutine against the Store's cache of
// what its committer last committed of the group (cache.go), or, for a
// group the cache does not hold, against its job row as a reader finds
// it, or its absence (assumed, unread, for a ctx marked by store.NewJob);
// the committer then only checks that the job's version is still the one
// fn saw and writes (an fn that fails or writes nothing is checked on a
// reader). If the group changed meanwhile, or fn asked what the cache
// cannot answer, fn runs again on the committer, inside the physical
// transaction it writes in, where it sees the file as it is: there it
// shares the transaction with other Updates, so it must be quick and do
// no I/O outside tx (calling this Store's writes from it deadlocks), and
// Updates run in the order they were queued, each seeing the writes of
// those before it.
//
// A Put or Enqueue that failed fails the Update even if fn ignores the
// error, so a half-written transaction never commits. ctx only withdraws
// an Update whose writes the committer has not taken; once it has, Update
// reports what happened.
func (s *Store) Update(ctx context.Context, jobID string, fn func(store.Tx) error) ([]task.Task, error) {
	return s.Submit(ctx, jobID, fn)()
}

// Submit is Update, returning once fn has run on the caller's goroutine
// and its writes are queued for the committer (store.Submitter): one
// caller can then keep many Updates in flight, and the committer's batches
// fill with them. fn runs again, on the committer, when wait is called,
// if the job changed meanwhile.
func (s *Store) Submit(ctx context.Context, jobID string, fn func(store.Tx) error) (wait func() ([]task.Task, error)) {
	if s.closed.Load() {
		return answered(nil, ErrClosed)
	}
	g := s.cache.get(jobID)
	switch {
	case g != nil:
	case store.IsNewJob(ctx):
		// Checked as any absence read on a reader is: apply inserts
		// only an absent job and refuses a write without one, and
		// stillCurrent reads the job for an fn that writes nothing.
		g = &cachedGroup{version: noVersion}
	default:
		var err error
		if g, err = s.load(ctx, jobID); err != nil {
			return answered(nil, err)
		}
	}
	cached := s.submitCached(ctx, jobID, g, fn)
	return func() ([]task.Task, error) {
		tasks, err := cached()
		if !errors.Is(err, errStale) {
			return tasks, err
		}
		return s.updateOnCommitter(ctx, jobID, fn)
	}
}

// answered is a wait for an Update whose answer is known already.
func answered(tasks []task.Task, err error) func() ([]task.Task, error) {
	return func() ([]task.Task, error) { return tasks, err }
}

// load reads jobID's row on a reader, as a group to run fn on: a job
// defined for the first time, or first written since Open, then costs the
// committer what a cached one does. The group holds no invocation: those
// fn reads are answered absent, which the committer checks, and one that
// exists sends fn to the committer. A job found is cached, unless the
// committer has meanwhile cached a later version: after a restart, the
// Update that finds the job unchanged (its definition applied again)
// leaves it cached for the tick that follows.
func (s *Store) load(ctx context.Context, jobID string) (*cachedGroup, error) {
	j, version, err := scanVersionedJob(s.readStmts.job.QueryRowContext(ctx, jobID))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return &cachedGroup{version: noVersion}, nil
	case err != nil:
		return nil, fmt.Errorf("sqlite: read job %s: %w", jobID, err)
	}
	g := &cachedGroup{version: version, job: j}
	s.cache.putIfNewer(jobID, g)
	return g, nil
}

// errStale: fn's run on the cache cannot stand, and it runs on the
// committer instead.
var errStale = errors.New("sqlite: the cached job is stale")

// submitCached runs fn on the cached group g and queues its writes for
// the committer, which writes them if the job is still at g's version;
// wait reports how that went.
func (s *Store) submitCached(ctx context.Context, jobID string, g *cachedGroup, fn func(store.Tx) error) (wait func() ([]task.Task, error)) {
	t := &tx{s: s, jobID: jobID, invs: map[string]*store.InvocationRecord{}, cached: g, version: g.version}
	if g.job == nil {
		t.jobAbsent = true
	} else {
		t.loaded, t.readJob, t.readProject = g.job, true, g.job.Project
	}
	err := fn(t)
	t.ended = true
	if err == nil {
		err = t.failed
	}
	if t.unanswered {
		return answered(nil, errStale)
	}
	if err != nil || !t.writes() {
		// fn failed, or has nothing to write (the engine's way of saying
		// nothing changed): either way what it decided on must still be
		// what the file holds, as another process may have moved the job
		// on. If it is, the committer has nothing to do.
		if cerr := s.stillCurrent(ctx, t); cerr != nil {
			if errors.Is(cerr, errStale) {
				s.cache.drop(jobID, g)
			}
			return answered(nil, cerr)
		}
		return answered(nil, err)
	}
	r, err := s.push(ctx, true, t.committed, func(w *writer) error {
		t.w = w
		return t.apply()
	})
	if err != nil {
		return answered(nil, err)
	}
	return func() ([]task.Task, error) {
		if err := r.wait(); err != nil {
			if errors.Is(err, errStale) {
				s.cache.drop(jobID, g)
			}
			return nil, err
		}
		return t.tasks, nil
	}
}

// stillCurrent checks, on a reader, that the job is still at the version
// t ran on and that the invocations t found absent still are; errStale if
// not.
func (s *Store) stillCurrent(ctx context.Context, t *tx) error {
	var version int64
	err := s.readStmts.version.QueryRowContext(ctx, t.jobID).Scan(&version)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if !t.jobAbsent {
			return errStale
		}
	case err != nil:
		return fmt.Errorf("sqlite: read job %s: %w", t.jobID, err)
	case t.jobAbsent || version != t.version:
		return errStale
	}
	for _, id := range t.absent {
		var n int
		if err := s.read.QueryRowContext(ctx, "SELECT count(*) FROM invocations WHERE job_id = ? AND id = ?", t.jobID, id).Scan(&n); err != nil {
			return fmt.Errorf("sqlite: read invocation %s/%s: %w", t.jobID, id, err)
		}
		if n != 0 {
			return errStale
		}
	}
	return nil
}

// updateOnCommitter runs fn on the committer, inside the physical
// transaction it writes in.
func (s *Store) updateOnCommitter(ctx context.Context, jobID string, fn func(store.Tx) error) ([]task.Task, error) {
	var last *tx
	onCommit := func() {
		if last != nil {
			last.committed()
		}
	}
	err := s.write(ctx, true, onCommit, func(w *writer) error {
		t := &tx{s: s, w: w, jobID: jobID, invs: map[string]*store.InvocationRecord{}, version: noVersion}
		last = nil
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
		// The op may run again after a failed batch: keep the last run.
		last = t
		return nil
	})
	if err != nil || last == nil {
		return nil, err
	}
	return last.tasks, nil
}

// tx is store.Tx on the committer's connection. It keeps its writes until
// fn returns nil and only then applies them, so that an fn that fails
// costs its batch nothing: no savepoint to take and roll back (which,
// measured, was most of an Update's cost) and nothing to undo.
type tx struct {
	w     *writer // set when the writes are applied
	jobID string
	s     *Store

	// cached is the group fn ran on, nil on the committer. version is its
	// version; on the committer, the version the job was read at; or
	// noVersion, for a job not read or found absent.
	cached  *cachedGroup
	version int64
	// absent are the invocations the cache did not hold, answered
	// ErrNotFound; the committer checks that they do not exist.
	absent []string
	// jobAbsent: the group fn runs on has no job row (cached), or Job
	// found none (on the committer).
	jobAbsent bool
	// unanswered: fn asked the cache what it cannot answer; it runs on the
	// committer, whatever it returned.
	unanswered bool
	// readInvs are the invocations read from the file, by id.
	readInvs map[string]*store.InvocationRecord

	loaded   *store.JobRecord // the job as read, if it was
	job      *store.JobRecord // PutJob's, if any
	invs     map[string]*store.InvocationRecord
	invOrder []string
	defs     []definition // PutDefinition's, not known to be stored
	dels     []string     // DeleteInvocation's ids
	tasks    []task.Task
	// adopted are the tasks written claimed for adoption, handed to it
	// once the transaction committed.
	adopted  []task.Task
	adoption *taskrows.Adoption

	// What the transaction read of the job: its project. The project, and
	// the occurrences of the invocations read (readInvs), are what a row written back with these
	// unchanged is updated without them, so SQLite leaves the indexes
	// over them (jobs_project, invocations_newest) alone: it rewrites an
	// index entry for every indexed column an UPDATE sets, equal or not,
	// and those entries sit on random pages, each one more page for the
	// commit to write.
	readProject string
	readJob     bool

	failed error // the first failed call
	broken bool  // a statement failed: SQLite may have undone the whole batch
	ended  bool  // fn has returned; a kept Tx must not write into the next request
}

const noVersion = -1

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

func cloneJob(j *store.JobRecord) *store.JobRecord {
	c := *j
	c.Definition, c.EncodedState = bytes.Clone(j.Definition), bytes.Clone(j.EncodedState)
	return &c
}

func cloneInvocation(inv *store.InvocationRecord) *store.InvocationRecord {
	c := *inv
	c.Definition, c.Log = bytes.Clone(inv.Definition), bytes.Clone(inv.Log)
	return &c
}

// definition is one of the job's definitions, to be stored.
type definition struct {
	hash    string
	encoded []byte
}

func (t *tx) Job() (*store.JobRecord, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	if t.job != nil {
		return cloneJob(t.job), nil
	}
	if t.loaded != nil {
		return cloneJob(t.loaded), nil
	}
	if t.jobAbsent {
		return nil, store.ErrNotFound
	}
	j, version, err := scanVersionedJob(t.w.queryRow("SELECT version, "+jobColumns+" FROM jobs WHERE id = ?", t.jobID))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		t.jobAbsent = true
		return nil, store.ErrNotFound
	case err != nil:
		t.broken = true
		return nil, t.fail(fmt.Errorf("sqlite: read job %s: %w", t.jobID, err))
	}
	t.loaded, t.readJob, t.readProject, t.version = j, true, j.Project, version
	return cloneJob(j), nil
}

func (t *tx) PutJob(j *store.JobRecord) error {
	if err := t.check(); err != nil {
		return err
	}
	if j == nil || j.ID != t.jobID {
		return t.fail(fmt.Errorf("sqlite: PutJob of another group than %q", t.jobID))
	}
	if err := store.CheckPut(j); err != nil {
		return t.fail(fmt.Errorf("sqlite: %w", err))
	}
	// Encoding now reports a bad value to the caller of PutJob.
	if _, err := jobArgs(j); err != nil {
		return t.fail(err)
	}
	t.job = cloneJob(j)
	return nil
}

func (t *tx) Invocation(id string) (*store.InvocationRecord, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	if inv, ok := t.invs[id]; ok {
		return cloneInvocation(inv), nil
	}
	if inv, ok := t.readInvs[id]; ok {
		return cloneInvocation(inv), nil
	}
	if t.cached != nil {
		inv, ok := t.cached.invs[id]
		if !ok {
			t.absent = append(t.absent, id)
			return nil, store.ErrNotFound
		}
		t.read(inv)
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
	t.read(inv)
	return cloneInvocation(inv), nil
}

// HasInvocations answers from what the transaction put or read, and from
// the file for the rest in one query, their ids passed as one JSON array
// so that one prepared statement serves any number. Run on the cache, it
// cannot tell what the cache does not hold: the Update runs again on the
// committer, as for any answer the cache cannot stand behind.
func (t *tx) HasInvocations(ids []string) ([]bool, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	has := make([]bool, len(ids))
	var ask []string
	for i, id := range ids {
		_, put := t.invs[id]
		_, read := t.readInvs[id]
		switch {
		case put || read:
			has[i] = true
		case t.cached != nil:
			if _, ok := t.cached.invs[id]; !ok {
				t.unanswered = true
				return nil, t.fail(errStale)
			}
			has[i] = true
		default:
			ask = append(ask, id)
		}
	}
	if len(ask) == 0 {
		return has, nil
	}
	list, err := json.Marshal(ask)
	if err != nil {
		return nil, t.fail(err)
	}
	rows, err := t.w.query("SELECT id FROM invocations WHERE job_id = ? AND id IN (SELECT value FROM json_each(?))", t.jobID, string(list))
	if err != nil {
		t.broken = true
		return nil, t.fail(fmt.Errorf("sqlite: read invocations of %s: %w", t.jobID, err))
	}
	defer rows.Close()
	found := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.broken = true
			return nil, t.fail(fmt.Errorf("sqlite: read invocations of %s: %w", t.jobID, err))
		}
		found[id] = true
	}
	if err := rows.Err(); err != nil {
		t.broken = true
		return nil, t.fail(fmt.Errorf("sqlite: read invocations of %s: %w", t.jobID, err))
	}
	for i, id := range ids {
		has[i] = has[i] || found[id]
	}
	return has, nil
}

// read notes an invocation the transaction read; inv is not modified
// afterwards.
func (t *tx) read(inv *store.InvocationRecord) {
	if t.readInvs == nil {
		t.readInvs = map[string]*store.InvocationRecord{}
	}
	t.readInvs[inv.ID] = inv
}

func (t *tx) PutInvocation(inv *store.InvocationRecord) error {
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

// DeleteInvocation keeps the id for apply, whose DELETE leaves the row
// alone unless its status, as the file holds it then, is finished.
func (t *tx) DeleteInvocation(id string) error {
	if err := t.check(); err != nil {
		return err
	}
	if _, ok := t.invs[id]; ok {
		return t.fail(fmt.Errorf("sqlite: invocation %s/%s put and deleted in one transaction", t.jobID, id))
	}
	t.dels = append(t.dels, id)
	return nil
}

// PutDefinition keeps the definition for apply to insert, unless the Store
// knows it is stored: a job's every new invocation puts its definition,
// and only the first since it changed costs the committer an insert.
func (t *tx) PutDefinition(encoded []byte) (string, error) {
	if err := t.check(); err != nil {
		return "", err
	}
	hash := store.DefinitionHash(encoded)
	if t.s.definitions.Stored(t.jobID, hash) {
		return hash, nil
	}
	for _, d := range t.defs {
		if d.hash == hash {
			return hash, nil
		}
	}
	t.defs = append(t.defs, definition{hash, bytes.Clone(encoded)})
	return hash, nil
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

// apply writes what fn put and enqueued, and moves the job's version on.
// For a run on the cache it first checks, before writing anything, that
// the invocations it assumed absent are and that the job is still at the
// cached version: a rejection is clean.
func (t *tx) apply() error {
	if !t.writes() {
		return nil
	}
	if t.cached != nil {
		for _, id := range t.absent {
			var n int
			if err := t.w.queryRow("SELECT count(*) FROM invocations WHERE job_id = ? AND id = ?", t.jobID, id).Scan(&n); err != nil {
				return fmt.Errorf("sqlite: read invocation %s/%s: %w", t.jobID, id, err)
			}
			if n != 0 {
				return &rejected{errStale}
			}
		}
	}
	versioned := false
	if t.job != nil {
		args, err := jobArgs(t.job)
		switch {
		case err != nil:
		case t.jobAbsent && t.cached != nil:
			// A new job: inserted only if it is still absent.
			versioned = true
			var n int64
			n, err = t.rowsAffected(`INSERT INTO jobs (`+jobColumns+`) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`, args...)
			if err == nil && n != 1 {
				return &rejected{errStale}
			}
		case t.readJob && t.readProject == t.job.Project && t.cached != nil:
			versioned = true
			var n int64
			n, err = t.rowsAffected(`UPDATE jobs SET state = ?, watchdog_ts = ?, definition = ?, machine = ?, version = version + 1
				WHERE id = ? AND version = ?`, args[2], args[3], args[4], args[5], args[0], t.version)
			if err == nil && n != 1 {
				return &rejected{errStale}
			}
		case t.readJob && t.readProject == t.job.Project:
			versioned = true
			err = t.updateOne(`UPDATE jobs SET state = ?, watchdog_ts = ?, definition = ?, machine = ?, version = version + 1 WHERE id = ?`,
				args[2], args[3], args[4], args[5], args[0])
		case t.cached != nil:
			// The project changed: the version is checked first, below.
		default:
			versioned = true
			_, err = t.w.exec(`INSERT INTO jobs (`+jobColumns+`) VALUES (?, ?, ?, ?, ?, ?)
				ON CONFLICT (id) DO UPDATE SET project = excluded.project, state = excluded.state,
					watchdog_ts = excluded.watchdog_ts, definition = excluded.definition, machine = excluded.machine,
					version = version + 1`,
				args...)
		}
		if err != nil {
			return fmt.Errorf("sqlite: put job %s: %w", t.jobID, err)
		}
	}
	if !versioned {
		if err := t.bumpVersion(); err != nil {
			return err
		}
		if t.job != nil {
			args, err := jobArgs(t.job)
			if err == nil {
				err = t.updateOne(`UPDATE jobs SET project = ?, state = ?, watchdog_ts = ?, definition = ?, machine = ? WHERE id = ?`,
					args[1], args[2], args[3], args[4], args[5], args[0])
			}
			if err != nil {
				return fmt.Errorf("sqlite: put job %s: %w", t.jobID, err)
			}
		}
	}
	for _, id := range t.invOrder {
		inv := t.invs[id]
		args, err := invArgs(inv)
		old, read := t.readInvs[id]
		switch {
		case err != nil:
		case read && old.Occurrence.Equal(inv.Occurrence):
			err = t.updateOne(`UPDATE invocations SET status = ?, attempt = ?, manual = ?, created = ?, started = ?, ended = ?,
					message = ?, reason = ?, count = ?, last = ?, definition = ?, log = ?, definition_hash = ?, triggered_by = ?, backfill = ?
				WHERE job_id = ? AND id = ?`,
				append(args[3:18:18], args[0], args[1])...)
		default:
			_, err = t.w.exec(`INSERT INTO invocations (`+invColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (job_id, id) DO UPDATE SET occurrence = excluded.occurrence, status = excluded.status,
					attempt = excluded.attempt, manual = excluded.manual, created = excluded.created,
					started = excluded.started, ended = excluded.ended, message = excluded.message, reason = excluded.reason,
					count = excluded.count, last = excluded.last, definition = excluded.definition, log = excluded.log,
					definition_hash = excluded.definition_hash, triggered_by = excluded.triggered_by, backfill = excluded.backfill`,
				args...)
		}
		if err != nil {
			return fmt.Errorf("sqlite: put invocation %s/%s: %w", t.jobID, id, err)
		}
	}
	for _, id := range t.dels {
		if _, err := t.w.exec("DELETE FROM invocations WHERE job_id = ? AND id = ? AND status IN ('SUCCEEDED', 'FAILED', 'ABORTED', 'SKIPPED')", t.jobID, id); err != nil {
			return fmt.Errorf("sqlite: delete invocation %s/%s: %w", t.jobID, id, err)
		}
	}
	for _, d := range t.defs {
		// Another process, or this one before it learnt of it, may have
		// stored it: the same hash is the same bytes.
		if _, err := t.w.exec("INSERT OR IGNORE INTO definitions (job_id, hash, definition) VALUES (?, ?, ?)", t.jobID, d.hash, d.encoded); err != nil {
			return fmt.Errorf("sqlite: put definition %s of %s: %w", d.hash, t.jobID, err)
		}
	}
	return t.enqueue()
}

// enqueue writes the enqueued tasks. Those already due are written claimed
// by the adopting dispatcher, if there is one (Adoption), and kept in
// t.adopted for it.
func (t *tx) enqueue() error {
	t.adopted = t.adopted[:0]
	a := t.s.adoption.Load()
	var now int64
	if a != nil && len(t.tasks) > 0 {
		var err error
		if now, err = nanos(a.Now()); err != nil {
			return fmt.Errorf("sqlite: adoption clock: %w", err)
		}
	}
	for _, tk := range t.tasks {
		eta, err := etaNanos(tk.ETA)
		switch {
		case err != nil:
		case a != nil && eta <= now:
			var n int64
			n, err = t.rowsAffected(`INSERT OR IGNORE INTO tasks (name, job_id, kind, nonce, eta, invocation, attempt, owner, lease_until)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				tk.Name(), tk.JobID, string(tk.Kind), tk.Nonce, eta, tk.Invocation, tk.Attempt, a.Owner, now+int64(a.Lease))
			if n == 1 {
				t.adopted = append(t.adopted, tk)
			}
		default:
			_, err = t.w.exec(`INSERT OR IGNORE INTO tasks (name, job_id, kind, nonce, eta, invocation, attempt)
				VALUES (?, ?, ?, ?, ?, ?, ?)`,
				tk.Name(), tk.JobID, string(tk.Kind), tk.Nonce, eta, tk.Invocation, tk.Attempt)
		}
		if err != nil {
			return fmt.Errorf("sqlite: enqueue %s: %w", tk.Name(), err)
		}
	}
	if len(t.adopted) > 0 {
		// The claims are only as good as the owner's heartbeat.
		if err := beat(t.w, a.Owner, now); err != nil {
			return fmt.Errorf("sqlite: heartbeat of %s: %w", a.Owner, err)
		}
		t.adoption = a
	}
	return nil
}

// writes reports whether fn put or enqueued anything.
func (t *tx) writes() bool {
	return t.job != nil || len(t.invs) > 0 || len(t.defs) > 0 || len(t.tasks) > 0 || len(t.dels) > 0
}

// bumpVersion moves the job's version on, for a transaction that does not
// write the job's row itself; from the cache, only if it is still the
// cached one.
func (t *tx) bumpVersion() error {
	if t.cached == nil {
		// On the committer nothing can have changed since fn read; a group
		// without a job row has no version to move.
		if _, err := t.w.exec("UPDATE jobs SET version = version + 1 WHERE id = ?", t.jobID); err != nil {
			return fmt.Errorf("sqlite: version of %s: %w", t.jobID, err)
		}
		return nil
	}
	if t.jobAbsent {
		// A group without a job row has no version to check fn's run
		// by: the committer runs it.
		return &rejected{errStale}
	}
	n, err := t.rowsAffected("UPDATE jobs SET version = version + 1 WHERE id = ? AND version = ?", t.jobID, t.version)
	if err != nil {
		return fmt.Errorf("sqlite: version of %s: %w", t.jobID, err)
	}
	if n != 1 {
		return &rejected{errStale}
	}
	return nil
}

func (t *tx) rowsAffected(query string, args ...any) (int64, error) {
	res, err := t.w.exec(query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
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
