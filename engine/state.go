package engine

import (
	"fmt"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// Health is the engine's record of a job's trouble: how many deliveries of
// its tasks in a row failed with a transient error, and the last error.
// Zero while all is well.
type Health struct {
	TaskFailures int
	LastError    string
	LastErrorAt  time.Time
}

// jobState is what the engine keeps in store.JobRecord.EncodedState: the machine's
// state and the job's health.
type jobState struct {
	m      statemachine.JobState
	health Health
	audit  []AuditEntry // oldest first, at most MaxAudit
}

func (s jobState) clone() jobState {
	s.m = s.m.Clone()
	s.audit = slices.Clone(s.audit)
	return s
}

// State decodes the state machine's state stored in a job.
func State(job *store.JobRecord) (statemachine.JobState, error) {
	s, err := decodeState(job)
	return s.m, err
}

func decodeState(job *store.JobRecord) (jobState, error) {
	s, err := decodeJobState(job.EncodedState)
	if err != nil {
		wrapped := fmt.Errorf("job %s: stored state: %w", job.ID, err)
		if newerVersion(job.EncodedState, stateVersion) {
			return s, wrapped
		}
		return s, permanent(statemachine.ReasonStateUnreadable, err, wrapped)
	}
	return s, nil
}

// states caches each job's state by its encoding. Every transaction of a
// job decodes the state the one before it encoded; decoding that JSON was
// the engine's largest cost in sundial simulate (docs/benchmarks.md). An
// entry answers only for the exact bytes it was made from, so one left by
// a transaction that never committed is never used: the next state read
// from the store is other bytes.
type states struct{ m sync.Map } // job id -> *cachedState

type cachedState struct {
	encoded digest
	s       jobState // never modified: handed out as clones
}

// decode returns the job's state, from the cache if it holds these bytes.
func (c *states) decode(job *store.JobRecord) (jobState, error) {
	if v, ok := c.m.Load(job.ID); ok && v.(*cachedState).encoded == digestOf(job.EncodedState) {
		return v.(*cachedState).s.clone(), nil
	}
	s, err := decodeState(job)
	if err != nil {
		return s, err
	}
	c.put(job.ID, job.EncodedState, s)
	return s, nil
}

// put remembers that encoded is s. The machine's times carry no monotonic
// reading (the engine's clock is read without it), so s is what decoding
// encoded would give, up to the times' locations, which nothing reads.
func (c *states) put(jobID string, encoded []byte, s jobState) {
	c.m.Store(jobID, &cachedState{encoded: digestOf(encoded), s: s.clone()})
}

// digest stands for encoded bytes in the engine's caches, which hold an
// entry per job: keeping a copy of the bytes instead took a fifth of the
// memory of 100,000 jobs (docs/benchmarks.md). It is the length and two
// independently seeded 64-bit hashes, so two different encodings share a
// digest with a chance of about 2^-128.
type digest struct {
	n    int
	a, b uint64
}

var digestSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

func digestOf(encoded []byte) digest {
	return digest{len(encoded), maphash.Bytes(digestSeeds[0], encoded), maphash.Bytes(digestSeeds[1], encoded)}
}
