package datastore

import (
	"context"
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
	ctx   context.Context
	s     *Store
	dtx   *datastore.Transaction
	jobID string

	job     *store.JobRecord // as read or put; nil with jobRead: not found
	jobRead bool
	jobPut  bool

	invs   map[string]*store.InvocationRecord // as read or put; nil: not found
	invPut []string                           // ids put, each once, in order
	isPut  map[string]bool

	defs    map[string][]byte // definitions to store, by hash
	defPut  []string          // their hashes, in order
	defSeen []string          // hashes found stored

	tasks []task.Task
	names map[string]bool

	dels []string // DeleteInvocation's ids, checked finished by flush

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
	if err := store.CheckPut(j); err != nil {
		return t.refuse(fmt.Errorf("datastore: %w", err))
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

// HasInvocations looks up the ids the transaction has not read or put,
// up to store.MaxHasInvocations keys in one Lookup, and remembers what it
// found as Invocation does.
func (t *tx) HasInvocations(ids []string) ([]bool, error) {
	var keys []*datastore.Key
	for _, id := range ids {
		if _, ok := t.invs[id]; !ok {
			keys = append(keys, t.s.invocationKey(t.jobID, id))
		}
	}
	for len(keys) > 0 {
		n := min(len(keys), store.MaxHasInvocations)
		got := make([]invocationEntity, n)
		err := t.dtx.GetMulti(keys[:n], got)
		var missing datastore.MultiError
		if err != nil && !errors.As(err, &missing) {
			return nil, fmt.Errorf("datastore: reading invocations of %s: %w", t.jobID, err)
		}
		for i, k := range keys[:n] {
			switch {
			case missing == nil || missing[i] == nil:
				t.remember(k.Name, &got[i].InvocationRecord)
			case errors.Is(missing[i], datastore.ErrNoSuchEntity):
				t.remember(k.Name, nil)
			default:
				return nil, fmt.Errorf("datastore: reading invocation %s of %s: %w", k.Name, t.jobID, missing[i])
			}
		}
		keys = keys[n:]
	}
	has := make([]bool, len(ids))
	for i, id := range ids {
		has[i] = t.invs[id] != nil
	}
	return has, nil
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

// DeleteInvocation keeps the id for flush, which reads the record in the
// transaction and deletes it only if it is finished: the read makes a
// concurrent write of the record conflict with the delete.
func (t *tx) DeleteInvocation(id string) error {
	if t.isPut[id] {
		return t.refuse(fmt.Errorf("datastore: invocation %s of %s put and deleted in one transaction", id, t.jobID))
	}
	t.dels = append(t.dels, id)
	return nil
}

func (t *tx) remember(id string, inv *store.InvocationRecord) {
	if t.invs == nil {
		t.invs = map[string]*store.InvocationRecord{}
	}
	t.invs[id] = inv
}

// PutDefinition stores the definition with the commit unless it is stored
// already. The Store knows the job's last one; otherwise a keys-only query
// in the transaction, which reads an index entry and not the bytes, tells.
func (t *tx) PutDefinition(encoded []byte) (string, error) {
	hash := store.DefinitionHash(encoded)
	if _, ok := t.defs[hash]; ok || t.s.definitions.stored(t.jobID, hash) {
		return hash, nil
	}
	key := t.s.definitionKey(t.jobID, hash)
	q := datastore.NewQuery(kindDefinition).Namespace(t.s.opts.Namespace).Ancestor(t.s.jobKey(t.jobID)).
		FilterField("__key__", "=", key).KeysOnly().Transaction(t.dtx)
	keys, err := t.s.client.GetAll(t.ctx, q, nil)
	if err != nil {
		return "", fmt.Errorf("datastore: looking up definition %s of %s: %w", hash, t.jobID, err)
	}
	if len(keys) > 0 {
		t.defSeen = append(t.defSeen, hash)
		return hash, nil
	}
	if t.defs == nil {
		t.defs = map[string][]byte{}
	}
	t.defs[hash] = encoded
	t.defPut = append(t.defPut, hash)
	return hash, nil
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

// committed tells the Store of the definitions the committed transaction
// stored or found stored.
func (t *tx) committed() {
	for _, hash := range append(t.defSeen, t.defPut...) {
		t.s.definitions.put(t.jobID, hash)
	}
}

func (t *tx) refuse(err error) error {
	if t.refused == nil {
		t.refused = err
	}
	return err
}

func (t *tx) dirty() bool {
	return t.jobPut || len(t.invPut) > 0 || len(t.defPut) > 0 || len(t.dels) > 0
}

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
	for _, hash := range t.defPut {
		keys = append(keys, t.s.definitionKey(t.jobID, hash))
		src = append(src, &definitionEntity{t.defs[hash]})
	}
	if len(keys) > 0 {
		if _, err := t.dtx.PutMulti(keys, src); err != nil {
			return fmt.Errorf("datastore: job %s: %w", t.jobID, err)
		}
	}
	return t.flushDeletes()
}

// flushDeletes deletes the records DeleteInvocation named that are
// finished; absent and unfinished ones are left alone.
func (t *tx) flushDeletes() error {
	if len(t.dels) == 0 {
		return nil
	}
	var keys []*datastore.Key
	for _, id := range t.dels {
		if inv, ok := t.invs[id]; ok {
			if inv != nil && store.Finished(inv.Status) {
				keys = append(keys, t.s.invocationKey(t.jobID, id))
			}
			continue
		}
		keys = append(keys, t.s.invocationKey(t.jobID, id))
	}
	if len(keys) == 0 {
		return nil
	}
	got := make([]invocationEntity, len(keys))
	err := t.dtx.GetMulti(keys, got)
	var missing datastore.MultiError
	if err != nil && !errors.As(err, &missing) {
		return fmt.Errorf("datastore: reading invocations of %s to delete: %w", t.jobID, err)
	}
	var del []*datastore.Key
	for i, k := range keys {
		if missing != nil && missing[i] != nil {
			if errors.Is(missing[i], datastore.ErrNoSuchEntity) {
				continue
			}
			return fmt.Errorf("datastore: reading invocation %s of %s to delete: %w", k.Name, t.jobID, missing[i])
		}
		if store.Finished(got[i].Status) {
			del = append(del, k)
		}
	}
	if len(del) == 0 {
		return nil
	}
	if err := t.dtx.DeleteMulti(del); err != nil {
		return fmt.Errorf("datastore: deleting invocations of %s: %w", t.jobID, err)
	}
	return nil
}
