package sqlite

import (
	"sync"

	"github.com/sundial-cron/sundial/store"
)

// The Store keeps, per job, what its committer last committed of the job's
// group: the job row, its version, and the group's unfinished invocations
// that the committed transactions read or wrote. An Update runs fn on that
// first, on the caller's goroutine, so that the committer — the one
// goroutine every write of the file waits for — does not decode, step and
// encode the engine's state, nor read the rows back: it checks the version
// and writes. Measured under 100,000 every-minute jobs, fn and its reads
// were about half of the committer's time.
//
// The cache is only ever a guess. The job's version in the file is what
// decides: another process on the file, or a concurrent Update, moves it,
// and the transaction run on the cache is refused before it writes
// anything and runs again on the committer. An invocation the cache does
// not hold is answered ErrNotFound, and the committer checks that it
// indeed does not exist.
//
// It holds one entry per job an Update read or wrote since Open; entries
// and what they point to are never modified, only replaced. A job row put
// with a Memo is held with the memo and without its EncodedState, so that
// the engine's decoded state is the only copy of it in memory.
type rowCache struct {
	mu sync.Mutex
	m  map[string]*cachedGroup
}

// cachedGroup is a job's group as of one version.
type cachedGroup struct {
	version int64
	job     *store.JobRecord
	invs    map[string]*store.InvocationRecord // unfinished ones, by id
}

func (c *rowCache) init() { c.m = map[string]*cachedGroup{} }

func (c *rowCache) get(jobID string) *cachedGroup {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[jobID]
}

func (c *rowCache) put(jobID string, g *cachedGroup) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[jobID] = g
}

// putIfNewer caches g unless the entry for jobID is of g's version or
// later: a job's version in the file only moves on.
func (c *rowCache) putIfNewer(jobID string, g *cachedGroup) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[jobID]; old == nil || old.version < g.version {
		c.m[jobID] = g
	}
}

// drop forgets jobID's entry if it is still g, or whatever it is for nil.
func (c *rowCache) drop(jobID string, g *cachedGroup) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g == nil || c.m[jobID] == g {
		delete(c.m, jobID)
	}
}

// finished statuses are not kept: the engine does not read an ended
// invocation again, and if something does, the committer answers.
func finished(status string) bool {
	switch status {
	case "SUCCEEDED", "FAILED", "ABORTED", "SKIPPED":
		return true
	}
	return false
}

// committed records in the cache what t committed. The committer calls it
// after the COMMIT, in the order the batch ran, before it answers.
func (t *tx) committed() {
	if !t.writes() {
		return
	}
	for _, d := range t.defs {
		t.s.definitions.Put(t.jobID, d.hash)
	}
	if len(t.adopted) > 0 {
		t.adoption.Adopted(t.adopted)
	}
	var version int64
	base := t.cached
	switch {
	case t.jobAbsent && t.job != nil:
		// Inserted in this transaction: the column's default.
		version = 0
	case t.cached != nil:
		version = t.version + 1
	case t.readJob:
		version = t.version + 1
		if base = t.s.cache.get(t.jobID); base != nil && base.version != t.version {
			base = nil
		}
	default:
		// Written without reading the job: its version is not known here.
		t.s.cache.drop(t.jobID, nil)
		return
	}
	job := t.job
	switch {
	case job == nil:
		job = t.loaded
	case job.Memo != nil:
		// Its writer reads the state from the memo (store.JobRecord.Memo):
		// the cache holds it once. t.job is this transaction's own copy,
		// and apply, which wrote the bytes, does not run again.
		job.EncodedState = nil
	}
	if job == nil {
		t.s.cache.drop(t.jobID, nil)
		return
	}
	invs := map[string]*store.InvocationRecord{}
	if base != nil {
		for id, inv := range base.invs {
			invs[id] = inv
		}
	}
	for _, m := range []map[string]*store.InvocationRecord{t.readInvs, t.invs} {
		for id, inv := range m {
			if finished(inv.Status) {
				delete(invs, id)
				continue
			}
			invs[id] = inv
		}
	}
	if len(invs) == 0 {
		invs = nil // most jobs, between occurrences: an empty map is not free
	}
	t.s.cache.put(t.jobID, &cachedGroup{version: version, job: job, invs: invs})
}
