package engine

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// State decodes the state machine's state stored in a job.
func State(job *store.Job) (statemachine.Job, error) {
	var m statemachine.Job
	if err := json.Unmarshal(job.Machine, &m); err != nil {
		return m, fmt.Errorf("job %s: stored state: %w", job.ID, err)
	}
	return m, nil
}

// states caches each job's machine state by its encoding. Every transaction
// of a job decodes the state the one before it encoded; decoding that JSON
// was the engine's largest cost in sundial simulate (docs/benchmarks.md).
// An entry answers only for the exact bytes it was made from, so one left
// by a transaction that never committed is never used: the next state read
// from the store is other bytes.
type states struct{ m sync.Map } // job id -> *cachedState

type cachedState struct {
	encoded string
	m       statemachine.Job // never modified: handed out as clones
}

// decode returns the job's state, from the cache if it holds these bytes.
func (c *states) decode(job *store.Job) (statemachine.Job, error) {
	if v, ok := c.m.Load(job.ID); ok && v.(*cachedState).encoded == string(job.Machine) {
		return v.(*cachedState).m.Clone(), nil
	}
	m, err := State(job)
	if err != nil {
		return m, err
	}
	c.put(job.ID, job.Machine, m)
	return m, nil
}

// put remembers that encoded is m. The machine's times carry no monotonic
// reading (the engine's clock is read without it), so m is what decoding
// encoded would give, up to the times' locations, which nothing reads.
func (c *states) put(jobID string, encoded []byte, m statemachine.Job) {
	c.m.Store(jobID, &cachedState{encoded: string(encoded), m: m.Clone()})
}
