package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/taskrows"
)

// maxAttempts bounds how often Update runs a transaction PostgreSQL gave
// up (isRetryable) before it returns store.ErrConflict. The group's lock
// makes such failures rare: they come from a concurrent first insert of
// one definition or task by another group's transaction.
const maxAttempts = 10

// Update runs fn in a transaction that holds the advisory lock of jobID's
// group, and commits what fn put in one batch with the COMMIT.
func (s *Store) Update(ctx context.Context, jobID string, fn func(store.Tx) error) ([]task.Task, error) {
	for range maxAttempts {
		t, err := s.update(ctx, jobID, fn)
		if err == nil {
			s.updates.Add(1)
			s.commits.Add(1)
			if t.adoption != nil && len(t.adopted) > 0 {
				t.adoption.Adopted(t.adopted)
			}
			return t.tasks, nil
		}
		if !isRetryable(err) || ctx.Err() != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("postgres: update of %s: %w", jobID, store.ErrConflict)
}

// Submit starts Update on a goroutine of its own: a transaction here is a
// few round trips to the server, which many in flight share.
func (s *Store) Submit(ctx context.Context, jobID string, fn func(store.Tx) error) (wait func() ([]task.Task, error)) {
	type result struct {
		tasks []task.Task
		err   error
		panic any
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r.panic = p
			}
			done <- r
		}()
		r.tasks, r.err = s.Update(ctx, jobID, fn)
	}()
	return func() ([]task.Task, error) {
		r := <-done
		if r.panic != nil {
			panic(r.panic)
		}
		return r.tasks, r.err
	}
}

// update runs fn once. A failure of a Tx method is the Update's, even if
// fn swallowed it.
func (s *Store) update(ctx context.Context, jobID string, fn func(store.Tx) error) (*tx, error) {
	pt, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: begin: %w", err)
	}
	defer pt.Rollback(context.WithoutCancel(ctx))
	t := &tx{s: s, ctx: ctx, pt: pt, jobID: jobID, invs: map[string]*store.InvocationRecord{}}
	// The job row is read in the round trip that takes the lock: nearly
	// every fn begins by reading it. Two statements, not one: at READ
	// COMMITTED each statement reads as of its start, and one that read
	// the row as it waited for the lock would read it as the previous
	// holder found it.
	var b pgx.Batch
	b.Queue("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", jobID)
	b.Queue("SELECT "+jobColumns+" FROM sundial.jobs WHERE id = $1", jobID)
	br := pt.SendBatch(ctx, &b)
	if _, err := br.Exec(); err != nil {
		br.Close()
		return nil, fmt.Errorf("postgres: lock of %s: %w", jobID, err)
	}
	j, err := scanJob(br.QueryRow())
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		t.jobAbsent = true
	case err != nil:
		br.Close()
		return nil, fmt.Errorf("postgres: read job %s: %w", jobID, err)
	default:
		t.loaded = j
	}
	if err := br.Close(); err != nil {
		return nil, fmt.Errorf("postgres: read job %s: %w", jobID, err)
	}
	err = fn(t)
	t.ended.Store(true)
	if err == nil {
		err = t.failed
	}
	if err != nil {
		return nil, err
	}
	if err := t.apply(); err != nil {
		return nil, err
	}
	if err := pt.Commit(ctx); err != nil {
		return nil, fmt.Errorf("postgres: commit of %s: %w", jobID, err)
	}
	for _, d := range t.defs {
		t.s.definitions.Put(jobID, d.hash)
	}
	return t, nil
}

// tx is store.Tx on one PostgreSQL transaction. Reads go to the server
// (the group's lock makes them current); writes are kept until fn returns
// nil, so that an fn that fails wrote nothing.
type tx struct {
	s     *Store
	ctx   context.Context
	pt    pgx.Tx
	jobID string

	loaded    *store.JobRecord // the job as read with the lock
	jobAbsent bool
	job       *store.JobRecord // PutJob's, if any
	invs      map[string]*store.InvocationRecord
	invOrder  []string
	defs      []definition
	dels      []string
	tasks     []task.Task

	adopted  []task.Task
	adoption *taskrows.Adoption

	failed error
	ended  atomic.Bool // fn has returned: the Tx must not be used
}

type definition struct {
	hash    string
	encoded []byte
}

var errEnded = errors.New("postgres: transaction used after its function returned")

func (t *tx) check() error {
	if t.ended.Load() {
		return errEnded
	}
	return nil
}

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

func (t *tx) Job() (*store.JobRecord, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	switch {
	case t.job != nil:
		return cloneJob(t.job), nil
	case t.loaded != nil:
		return cloneJob(t.loaded), nil
	}
	return nil, store.ErrNotFound
}

func (t *tx) PutJob(j *store.JobRecord) error {
	if err := t.check(); err != nil {
		return err
	}
	if j == nil || j.ID != t.jobID {
		return t.fail(fmt.Errorf("postgres: PutJob of another group than %q", t.jobID))
	}
	if err := store.CheckPut(j); err != nil {
		return t.fail(fmt.Errorf("postgres: %w", err))
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
	inv, err := scanInvocation(t.pt.QueryRow(t.ctx, "SELECT "+invColumns+" FROM sundial.invocations WHERE job_id = $1 AND id = $2", t.jobID, id))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, store.ErrNotFound
	case err != nil:
		return nil, t.fail(fmt.Errorf("postgres: read invocation %s/%s: %w", t.jobID, id, err))
	}
	return inv, nil
}

func (t *tx) HasInvocations(ids []string) ([]bool, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	has := make([]bool, len(ids))
	var ask []string
	for i, id := range ids {
		if _, put := t.invs[id]; put {
			has[i] = true
		} else {
			ask = append(ask, id)
		}
	}
	if len(ask) == 0 {
		return has, nil
	}
	rows, err := t.pt.Query(t.ctx, "SELECT id FROM sundial.invocations WHERE job_id = $1 AND id = ANY($2)", t.jobID, ask)
	if err != nil {
		return nil, t.fail(fmt.Errorf("postgres: read invocations of %s: %w", t.jobID, err))
	}
	found := map[string]bool{}
	var id string
	_, err = pgx.ForEachRow(rows, []any{&id}, func() error {
		found[id] = true
		return nil
	})
	if err != nil {
		return nil, t.fail(fmt.Errorf("postgres: read invocations of %s: %w", t.jobID, err))
	}
	for i, id := range ids {
		has[i] = has[i] || found[id]
	}
	return has, nil
}

func (t *tx) PutInvocation(inv *store.InvocationRecord) error {
	if err := t.check(); err != nil {
		return err
	}
	if inv == nil || inv.JobID != t.jobID {
		return t.fail(fmt.Errorf("postgres: PutInvocation of another group than %q", t.jobID))
	}
	if inv.Occurrence.IsZero() {
		return t.fail(fmt.Errorf("postgres: invocation %s/%s has no occurrence", inv.JobID, inv.ID))
	}
	if slices.Contains(t.dels, inv.ID) {
		return t.fail(fmt.Errorf("postgres: invocation %s/%s deleted and put in one transaction", t.jobID, inv.ID))
	}
	if _, ok := t.invs[inv.ID]; !ok {
		t.invOrder = append(t.invOrder, inv.ID)
	}
	t.invs[inv.ID] = cloneInvocation(inv)
	return nil
}

// DeleteInvocation keeps the id for apply, whose DELETE leaves the row
// alone unless its status is finished.
func (t *tx) DeleteInvocation(id string) error {
	if err := t.check(); err != nil {
		return err
	}
	if _, ok := t.invs[id]; ok {
		return t.fail(fmt.Errorf("postgres: invocation %s/%s put and deleted in one transaction", t.jobID, id))
	}
	t.dels = append(t.dels, id)
	return nil
}

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

// Enqueue adds the task unless one of that name is queued: a repeat is a
// duplicate, and the first one's ETA stands.
func (t *tx) Enqueue(tk task.Task) error {
	if err := t.check(); err != nil {
		return err
	}
	if _, err := etaNanos(tk.ETA); err != nil {
		return t.fail(err)
	}
	name := tk.Name()
	for _, q := range t.tasks {
		if q.Name() == name {
			return nil
		}
	}
	t.tasks = append(t.tasks, tk)
	return nil
}

// apply sends what fn put and enqueued in one batch. Tasks already due are
// written claimed by the adopting dispatcher, if there is one.
func (t *tx) apply() error {
	var b pgx.Batch
	if t.job != nil {
		b.Queue(`INSERT INTO sundial.jobs (`+jobColumns+`) VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (id) DO UPDATE SET project = excluded.project, state = excluded.state,
				watchdog_ts = excluded.watchdog_ts, definition = excluded.definition, machine = excluded.machine`,
			jobArgs(t.job)...)
	}
	for _, d := range t.defs {
		b.Queue("INSERT INTO sundial.definitions (job_id, hash, definition) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", t.jobID, d.hash, d.encoded)
	}
	for _, id := range t.invOrder {
		b.Queue(`INSERT INTO sundial.invocations (`+invColumns+`) VALUES (`+invPlaceholders+`)
			ON CONFLICT (job_id, id) DO UPDATE SET `+invUpdate, invArgs(t.invs[id])...)
	}
	if len(t.dels) > 0 {
		b.Queue("DELETE FROM sundial.invocations WHERE job_id = $1 AND id = ANY($2) AND status IN ('SUCCEEDED', 'FAILED', 'ABORTED', 'SKIPPED')", t.jobID, t.dels)
	}
	a := t.adoptionNow()
	var adoptAt int64
	if a != nil {
		n, err := nanos(a.Now())
		if err != nil {
			return fmt.Errorf("postgres: adoption clock: %w", err)
		}
		adoptAt = n
	}
	var adoptable []task.Task
	for _, tk := range t.tasks {
		eta, _ := etaNanos(tk.ETA)
		if a != nil && eta <= adoptAt {
			adoptable = append(adoptable, tk)
			b.Queue(`INSERT INTO sundial.tasks (name, job_id, kind, nonce, eta, invocation, attempt, owner, lease_until)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (name) DO NOTHING`,
				tk.Name(), tk.JobID, string(tk.Kind), tk.Nonce, eta, tk.Invocation, tk.Attempt, a.Owner, adoptAt+int64(a.Lease))
			continue
		}
		b.Queue(`INSERT INTO sundial.tasks (name, job_id, kind, nonce, eta, invocation, attempt)
			VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (name) DO NOTHING`,
			tk.Name(), tk.JobID, string(tk.Kind), tk.Nonce, eta, tk.Invocation, tk.Attempt)
	}
	if len(adoptable) > 0 {
		// The claims are only as good as the owner's heartbeat.
		b.Queue(beatQuery, a.Owner, adoptAt)
	}
	if b.Len() == 0 {
		return nil
	}
	br := t.pt.SendBatch(t.ctx, &b)
	defer br.Close()
	if t.job != nil {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("postgres: write job %s: %w", t.jobID, err)
		}
	}
	for range t.defs {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("postgres: write a definition of %s: %w", t.jobID, err)
		}
	}
	for _, id := range t.invOrder {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("postgres: write invocation %s/%s: %w", t.jobID, id, err)
		}
	}
	if len(t.dels) > 0 {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("postgres: delete invocations of %s: %w", t.jobID, err)
		}
	}
	for _, tk := range t.tasks {
		ct, err := br.Exec()
		if err != nil {
			return fmt.Errorf("postgres: enqueue %s: %w", tk.Name(), err)
		}
		if a != nil && ct.RowsAffected() == 1 && slices.ContainsFunc(adoptable, func(x task.Task) bool { return x.Name() == tk.Name() }) {
			t.adopted = append(t.adopted, tk)
		}
	}
	if len(adoptable) > 0 {
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("postgres: heartbeat of %s: %w", a.Owner, err)
		}
		if len(t.adopted) > 0 {
			t.adoption = a
		}
	}
	return br.Close()
}

// adoptionNow is the Store's adoption when this transaction applies.
func (t *tx) adoptionNow() *taskrows.Adoption {
	if len(t.tasks) == 0 {
		return nil
	}
	return t.s.adoption.load()
}
