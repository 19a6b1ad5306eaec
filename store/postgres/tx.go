package postgres

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/taskrows"
)

// tx is store.Tx on one job's group within a batch's PostgreSQL
// transaction (group.go). Reads go to the server with the batch's other
// reads (reads.go; the group's lock makes them current); writes are kept
// until fn returns nil, so that an fn that fails wrote nothing and the
// batch commits the others'.
type tx struct {
	reads  *reads
	jobID  string
	stored *store.StoredDefinitions // the store's, to skip a definition it holds

	loaded   *store.JobRecord // the job as read with the lock
	job      *store.JobRecord // PutJob's, if any
	invs     map[string]*store.InvocationRecord
	invOrder []string
	defs     []definition
	dels     []string
	tasks    []task.Task

	failed error
	// broken is a read the server failed: the batch's transaction may be
	// aborted, so no request in it can commit.
	broken error
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

// serverFailed records a read the server failed.
func (t *tx) serverFailed(err error) error {
	if t.broken == nil {
		t.broken = err
	}
	return t.fail(err)
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
	inv, err := t.reads.invocation(t.jobID, id)
	switch {
	case err != nil:
		return nil, t.serverFailed(fmt.Errorf("postgres: read invocation %s/%s: %w", t.jobID, id, err))
	case inv == nil:
		return nil, store.ErrNotFound
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
	found := map[string]bool{}
	err := t.reads.query("SELECT id FROM sundial.invocations WHERE job_id = $1 AND id = ANY($2)", []any{t.jobID, ask}, func(rows pgx.Rows) error {
		var id string
		_, err := pgx.ForEachRow(rows, []any{&id}, func() error {
			found[id] = true
			return nil
		})
		return err
	})
	if err != nil {
		return nil, t.serverFailed(fmt.Errorf("postgres: read invocations of %s: %w", t.jobID, err))
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
	if t.stored.Stored(t.jobID, hash) {
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

// writes gathers what a batch's functions put, for one statement a table.
type writes struct {
	jobs []*store.JobRecord
	defs struct {
		jobIDs, hashes []string
		encoded        [][]byte
	}
	invs  []*store.InvocationRecord
	dels  struct{ jobIDs, ids []string }
	tasks []task.Task
}

func (w *writes) add(t *tx) {
	if t.job != nil {
		w.jobs = append(w.jobs, t.job)
	}
	for _, d := range t.defs {
		w.defs.jobIDs = append(w.defs.jobIDs, t.jobID)
		w.defs.hashes = append(w.defs.hashes, d.hash)
		w.defs.encoded = append(w.defs.encoded, d.encoded)
	}
	for _, id := range t.invOrder {
		w.invs = append(w.invs, t.invs[id])
	}
	for _, id := range t.dels {
		w.dels.jobIDs = append(w.dels.jobIDs, t.jobID)
		w.dels.ids = append(w.dels.ids, id)
	}
	w.tasks = append(w.tasks, t.tasks...)
}

// The batch's statements: each writes its table's rows from one array a
// column.
const (
	writeJobs = `INSERT INTO sundial.jobs (` + jobColumns + `)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::bytea[], $6::bytea[])
		ON CONFLICT (id) DO UPDATE SET project = excluded.project, state = excluded.state,
			watchdog_ts = excluded.watchdog_ts, definition = excluded.definition, machine = excluded.machine`
	writeDefinitions = `INSERT INTO sundial.definitions (job_id, hash, definition)
		SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[]) ON CONFLICT DO NOTHING`
	deleteInvocations = `DELETE FROM sundial.invocations i USING unnest($1::text[], $2::text[]) AS d(job_id, id)
		WHERE i.job_id = d.job_id AND i.id = d.id AND i.status IN ('SUCCEEDED', 'FAILED', 'ABORTED', 'SKIPPED')`
	// writeTasks returns the names it inserted: a task already queued
	// keeps its row, and is not adopted again.
	writeTasks = `INSERT INTO sundial.tasks (name, job_id, kind, nonce, eta, invocation, attempt, owner, lease_until)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::text[], $7::integer[], $8::text[], $9::bigint[])
		ON CONFLICT (name) DO NOTHING RETURNING name`
)

// writeInvocations upserts invColumns from one array a column.
var writeInvocations = `INSERT INTO sundial.invocations (` + invColumns + `)
	SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::integer[], $6::boolean[],
		$7::timestamptz[], $8::timestamptz[], $9::timestamptz[], $10::text[], $11::text[], $12::integer[], $13::timestamptz[],
		$14::bytea[], $15::bytea[], $16::text[], $17::text[], $18::boolean[])
	ON CONFLICT (job_id, id) DO UPDATE SET ` + invUpdate

// commit writes w and commits the transaction conn is in, in one round
// trip. Tasks already due are written claimed by a, the adopting
// dispatcher, if there is one; commit returns those it inserted, for
// a.Adopted. If the commit's answer is lost, the claims may stand
// unknown to a: commit tells a.Lost when it wrote them.
func (w *writes) commit(ctx context.Context, conn sender, a *taskrows.Adoption) (adopted []task.Task, err error) {
	var b pgx.Batch
	if len(w.jobs) > 0 {
		b.Queue(writeJobs, jobColumnsOf(w.jobs)...)
	}
	if len(w.defs.hashes) > 0 {
		b.Queue(writeDefinitions, w.defs.jobIDs, w.defs.hashes, w.defs.encoded)
	}
	if len(w.invs) > 0 {
		b.Queue(writeInvocations, invColumnsOf(w.invs)...)
	}
	if len(w.dels.ids) > 0 {
		b.Queue(deleteInvocations, w.dels.jobIDs, w.dels.ids)
	}
	var adoptable map[string]task.Task
	if len(w.tasks) > 0 {
		cols, adoptAt, err := taskColumnsOf(w.tasks, a)
		if err != nil {
			return nil, err
		}
		adoptable = cols.adoptable
		b.Queue(writeTasks, cols.args()...)
		if len(adoptable) > 0 {
			// The claims are only as good as the owner's heartbeat.
			b.Queue(beatQuery, a.Owner, adoptAt)
			defer func() {
				if err != nil && a.Lost != nil && mayHaveCommitted(err) {
					a.Lost(time.Unix(0, adoptAt))
				}
			}()
		}
	}
	b.Queue("COMMIT")
	br := conn.SendBatch(ctx, &b)
	defer br.Close()
	for _, step := range []struct {
		what string
		n    int
	}{{"jobs", len(w.jobs)}, {"definitions", len(w.defs.hashes)}, {"invocations", len(w.invs)}, {"deletions of invocations", len(w.dels.ids)}} {
		if step.n == 0 {
			continue
		}
		if _, err := br.Exec(); err != nil {
			return nil, fmt.Errorf("postgres: write %s: %w", step.what, err)
		}
	}
	if len(w.tasks) > 0 {
		rows, err := br.Query()
		if err != nil {
			return nil, fmt.Errorf("postgres: enqueue: %w", err)
		}
		var name string
		if _, err := pgx.ForEachRow(rows, []any{&name}, func() error {
			if tk, ok := adoptable[name]; ok {
				adopted = append(adopted, tk)
			}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("postgres: enqueue: %w", err)
		}
		if len(adoptable) > 0 {
			if _, err := br.Exec(); err != nil {
				return nil, fmt.Errorf("postgres: heartbeat of %s: %w", a.Owner, err)
			}
		}
	}
	// A COMMIT of a transaction that failed answers ROLLBACK, not an
	// error.
	if tag, err := br.Exec(); err != nil || tag.String() != "COMMIT" {
		return nil, fmt.Errorf("postgres: commit: %w", cmp.Or(err, fmt.Errorf("the server answered %s (%w)", tag, errRolledBack)))
	}
	return adopted, br.Close()
}

func jobColumnsOf(jobs []*store.JobRecord) []any {
	ids, projects, states := make([]string, len(jobs)), make([]string, len(jobs)), make([]string, len(jobs))
	watchdogs := make([]*time.Time, len(jobs))
	defs, machines := make([][]byte, len(jobs)), make([][]byte, len(jobs))
	for i, j := range jobs {
		ids[i], projects[i], states[i] = j.ID, j.Project, j.State
		if !j.WatchdogTimerTs.IsZero() {
			watchdogs[i] = &j.WatchdogTimerTs
		}
		defs[i], machines[i] = j.Definition, j.EncodedState
	}
	return []any{ids, projects, states, watchdogs, defs, machines}
}

func invColumnsOf(invs []*store.InvocationRecord) []any {
	n := len(invs)
	jobIDs, ids, statuses, messages, reasons, hashes, triggeredBy := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	occurrences := make([]time.Time, n)
	created, started, ended, last := make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n)
	attempts, counts := make([]int32, n), make([]int32, n)
	manual, backfill := make([]bool, n), make([]bool, n)
	defs, logs := make([][]byte, n), make([][]byte, n)
	for i, inv := range invs {
		jobIDs[i], ids[i], occurrences[i], statuses[i] = inv.JobID, inv.ID, inv.Occurrence, inv.Status
		attempts[i], manual[i] = int32(inv.Attempt), inv.Manual
		created[i], started[i], ended[i] = timeOrNil(inv.Created), timeOrNil(inv.Started), timeOrNil(inv.Ended)
		messages[i], reasons[i], counts[i], last[i] = inv.Message, inv.Reason, int32(inv.Count), timeOrNil(inv.Last)
		defs[i], logs[i], hashes[i], triggeredBy[i], backfill[i] = inv.Definition, inv.Log, inv.DefinitionHash, inv.TriggeredBy, inv.Backfill
	}
	return []any{jobIDs, ids, occurrences, statuses, attempts, manual, created, started, ended, messages, reasons, counts, last, defs, logs, hashes, triggeredBy, backfill}
}

// timeOrNil is t for a timestamptz array's element, nil (NULL) for the
// zero time.
func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// taskArrays are the task rows' arrays, and the tasks among them written
// claimed, by name.
type taskArrays struct {
	names, jobIDs, kinds, invocations []string
	nonces, etas                      []int64
	attempts                          []int32
	owners                            []*string
	leases                            []*int64
	adoptable                         map[string]task.Task
}

func (c *taskArrays) args() []any {
	return []any{c.names, c.jobIDs, c.kinds, c.nonces, c.etas, c.invocations, c.attempts, c.owners, c.leases}
}

// taskColumnsOf returns the rows of tasks, those due by a's clock claimed
// by a, and that clock's reading.
func taskColumnsOf(tasks []task.Task, a *taskrows.Adoption) (*taskArrays, int64, error) {
	var adoptAt int64
	if a != nil {
		n, err := nanos(a.Now())
		if err != nil {
			return nil, 0, fmt.Errorf("postgres: adoption clock: %w", err)
		}
		adoptAt = n
	}
	c := &taskArrays{adoptable: map[string]task.Task{}}
	for _, tk := range tasks {
		eta, err := etaNanos(tk.ETA)
		if err != nil {
			return nil, 0, err
		}
		name := tk.Name()
		var owner *string
		var lease *int64
		if a != nil && eta <= adoptAt {
			until := adoptAt + int64(a.Lease)
			owner, lease = &a.Owner, &until
			c.adoptable[name] = tk
		}
		c.names = append(c.names, name)
		c.jobIDs = append(c.jobIDs, tk.JobID)
		c.kinds = append(c.kinds, string(tk.Kind))
		c.nonces = append(c.nonces, tk.Nonce)
		c.etas = append(c.etas, eta)
		c.invocations = append(c.invocations, tk.Invocation)
		c.attempts = append(c.attempts, int32(tk.Attempt))
		c.owners = append(c.owners, owner)
		c.leases = append(c.leases, lease)
	}
	return c, adoptAt, nil
}
