package store

import "sync"

// StoredDefinitions knows, per job, the hash of the definition it last
// stored or found stored, so that a backend skips the write of one it
// knows stored (Tx.PutDefinition): a job's every new invocation puts its
// definition. A stored definition is never replaced nor deleted, so this
// is a fact, not a guess (it would have to keep the job's current one,
// the one its new invocations put, if definitions could be deleted). It
// holds one entry per job that created an invocation since the store
// opened: a plain map of the hashes' bytes, where a sync.Map of their hex
// took about 180 bytes a job.
type StoredDefinitions struct {
	mu sync.Mutex
	m  map[string]DefinitionSum // by job id
}

// Stored reports whether hash is the definition of jobID known stored.
func (d *StoredDefinitions) Stored(jobID, hash string) bool {
	d.mu.Lock()
	sum, ok := d.m[jobID]
	d.mu.Unlock()
	return ok && sum.Names(hash)
}

// Put records hash as jobID's definition known stored, once the
// transaction that stored it committed.
func (d *StoredDefinitions) Put(jobID, hash string) {
	sum, ok := ParseDefinitionHash(hash)
	d.mu.Lock()
	defer d.mu.Unlock()
	if !ok {
		// Not a hash this map can hold: forget, rather than keep a stale one.
		delete(d.m, jobID)
		return
	}
	if d.m == nil {
		d.m = map[string]DefinitionSum{}
	}
	d.m[jobID] = sum
}
