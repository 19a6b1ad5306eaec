package datastore

import (
	"errors"
	"fmt"

	"cloud.google.com/go/datastore"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task"
)

// tx is one attempt of a transaction on a job's group. A Datastore
// transaction does not see its own mutations, and the engine reads what it
// wrote, so tx keeps every entity it read or wrote and sends the writes
// with the commit: a second read of an entity costs no lookup, and each
// entity is written once however often fn puts it.
type tx struct {
	s     *Store
	dtx   *datastore.Transaction
	jobID string

	job     *store.JobRecord // as read or put; nil with jobRead: not found
	jobRead bool
	jobPut  bool

	invs   map[string]*store.InvocationRecord // as read or put; nil: not found
	invPut []string                           // ids put, each once, in order
	isPut  map[string]bool

	tasks []task.Task
	names map[string]bool

	// refused is the first write refused; it fails the Update even if fn
	// ignores it.
	refused error
}

func (t *tx) Job() (*store.JobRecord, error) {
	if !t.jobRead {
		var e jobEntity
		err := t.dtx.Get(t.s.jobKey(t.jobID), &e)
		switch {
		case errors.Is(err, datastore.ErrNoSuchEntity):
		case err != nil:
			return nil, fmt.Errorf("datastore: reading job %s: %w", t.jobID, err)
		default:
			t.job = &e.JobRecord
		}
		t.jobRead = true
	}
	if t.job == nil {
		return nil, store.ErrNotFound
	}
	j := *t.job
	return &j, nil
}

func (t *tx) PutJob(j *store.JobRecord) error {
	if j.ID != t.jobID {
		return t.refuse(fmt.Errorf("datastore: job %s put in a transaction on %s: a transaction writes only its own job's group", j.ID, t.jobID))
	}
	c := *j
	t.job, t.jobRead, t.jobPut = &c, true, true
	return nil
}

func (t *tx) Invocation(id string) (*store.InvocationRecord, error) {
	inv, ok := t.invs[id]
	if !ok {
		var e invocationEntity
		err := t.dtx.Get(t.s.invocationKey(t.jobID, id), &e)
		switch {
		case errors.Is(err, datastore.ErrNoSuchEntity):
		case err != nil:
			return nil, fmt.Errorf("datastore: reading invocation %s of %s: %w", id, t.jobID, err)
		default:
			inv = &e.InvocationRecord
		}
		t.remember(id, inv)
	}
	if inv == nil {
		return nil, store.ErrNotFound
	}
	c := *inv
	return &c, nil
}

func (t *tx) PutInvocation(inv *store.InvocationRecord) error {
	if inv.JobID != t.jobID {
		return t.refuse(fmt.Errorf("datastore: invocation %s of job %s put in a transaction on %s: a transaction writes only its own job's group", inv.ID, inv.JobID, t.jobID))
	}
	if inv.ID == "" {
		return t.refuse(fmt.Errorf("datastore: an invocation of %s without an id", t.jobID))
	}
	c := *inv
	if !t.isPut[inv.ID] {
		if t.isPut == nil {
			t.isPut = map[string]bool{}
		}
		t.isPut[inv.ID] = true
		t.invPut = append(t.invPut, inv.ID)
	}
	t.remember(inv.ID, &c)
	return nil
}

func (t *tx) remember(id string, inv *store.InvocationRecord) {
	if t.invs == nil {
		t.invs = map[string]*store.InvocationRecord{}
	}
	t.invs[id] = inv
}

// Enqueue collects the task; Update returns it after the commit. A second
// task of the same name is the same task.
func (t *tx) Enqueue(tk task.Task) error {
	if tk.JobID != t.jobID {
		return t.refuse(fmt.Errorf("datastore: task %s enqueued in a transaction on %s", tk, t.jobID))
	}
	if t.names[tk.Name()] {
		return nil
	}
	if t.names == nil {
		t.names = map[string]bool{}
	}
	t.names[tk.Name()] = true
	t.tasks = append(t.tasks, tk)
	return nil
}

func (t *tx) refuse(err error) error {
	if t.refused == nil {
		t.refused = err
	}
	return err
}

func (t *tx) dirty() bool { return t.jobPut || len(t.invPut) > 0 }

// flush hands the buffered writes to the transaction, which sends them with
// its commit.
func (t *tx) flush() error {
	var keys []*datastore.Key
	var src []any
	if t.jobPut {
		keys = append(keys, t.s.jobKey(t.jobID))
		src = append(src, &jobEntity{*t.job})
	}
	for _, id := range t.invPut {
		keys = append(keys, t.s.invocationKey(t.jobID, id))
		src = append(src, &invocationEntity{*t.invs[id]})
	}
	if _, err := t.dtx.PutMulti(keys, src); err != nil {
		return fmt.Errorf("datastore: job %s: %w", t.jobID, err)
	}
	return nil
}
