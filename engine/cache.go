package engine

import (
	"fmt"
	"hash/maphash"
	"sync"
	"time"
	"unique"

	"github.com/sundial-cron/sundial/schedule"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// jobCache keeps, per job, its state and its definition decoded, and the
// definition's schedule parsed, each with the digest of the bytes it was
// made from. Every transaction of a job decodes the state the one before
// it encoded and parses the same definition; decoding was the engine's
// largest cost in sundial simulate, and loading a zone reads the zone
// database (docs/benchmarks.md).
//
// An entry answers only for the exact bytes it was made from, so a state
// put by a transaction that never committed is never used: the next state
// read from the store is other bytes.
//
// One entry per job, in plain maps under a lock per shard: two sync.Maps,
// one for states and one for definitions, cost about 200 bytes a job of
// their own at 100,000 jobs, and their nodes were more pointers for every
// garbage collection to follow.
type jobCache struct {
	shards [cacheShards]cacheShard
}

// cacheShards spreads the engine's concurrent transactions over locks;
// each is held only to copy an entry in or out.
const cacheShards = 64

type cacheShard struct {
	mu sync.Mutex
	m  map[string]*cacheEntry
}

// cacheEntry is modified only under its shard's lock, and what it points
// to never: the state's slices and pointers are its own clones, and the
// definition and schedule are shared read-only.
type cacheEntry struct {
	state digest
	s     packedState
	def   digest
	d     *Definition
	sched *schedule.Schedule
	// Side by side, with the hash's bytes, to take no padding of their own.
	hasState, hasDef bool
	defSum           store.DefinitionSum
}

var shardSeed = maphash.MakeSeed()

func (c *jobCache) shard(jobID string) *cacheShard {
	return &c.shards[maphash.String(shardSeed, jobID)%cacheShards]
}

// entry returns jobID's entry, created if absent; the caller holds sh.mu.
func (sh *cacheShard) entry(jobID string) *cacheEntry {
	e := sh.m[jobID]
	if e == nil {
		if sh.m == nil {
			sh.m = map[string]*cacheEntry{}
		}
		e = &cacheEntry{}
		sh.m[jobID] = e
	}
	return e
}

// state returns the job's state, from the cache if it holds these bytes.
func (c *jobCache) state(job *store.JobRecord) (jobState, error) {
	d := digestOf(job.EncodedState)
	sh := c.shard(job.ID)
	sh.mu.Lock()
	e := sh.m[job.ID]
	hit := e != nil && e.hasState && e.state == d
	var p packedState
	if hit {
		p = e.s
	}
	sh.mu.Unlock()
	if hit {
		return p.unpack().clone(), nil
	}
	s, err := decodeState(job)
	if err != nil {
		return s, err
	}
	s.intern()
	c.putState(job.ID, job.EncodedState, s)
	return s, nil
}

// putState remembers that encoded is s. The machine's times carry no
// monotonic reading (the engine's clock is read without it), so s is what
// decoding encoded would give, up to the times' locations, which nothing
// reads.
func (c *jobCache) putState(jobID string, encoded []byte, s jobState) {
	d, p := digestOf(encoded), pack(s.clone())
	sh := c.shard(jobID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.entry(jobID)
	e.hasState, e.state, e.s = true, d, p
}

// packedState is a jobState in less memory, for the cache's entry per
// job: the machine's five times as seconds and nanoseconds, with an index
// into at most two locations instead of a location pointer each (the
// engine's clock gives one, UTC schedules another), and the health,
// nearly always zero, behind a pointer. Unpacked, it is the jobState it
// was packed from, == for ==, so that it encodes to the bytes its entry
// is for. A state whose times have more locations is kept whole.
type packedState struct {
	state     statemachine.State
	reason    statemachine.Reason
	tickNonce int64
	triggers  int64
	failures  int
	secs      [packedTimes]int64
	nsecs     [packedTimes]int32 // -1 for the zero time
	locIndex  [packedTimes]uint8
	locs      [2]*time.Location
	pending   *statemachine.Occurrence
	active    []statemachine.Invocation
	backfill  *statemachine.Backfill
	health    *Health
	audit     []AuditEntry
	whole     *jobState // instead of all the above, for a state that does not pack
}

const packedTimes = 5

func (s *jobState) packedTimes() [packedTimes]*time.Time {
	m := &s.m
	return [packedTimes]*time.Time{&m.TickAt, &m.NextAt, &m.Cursor, &m.LastEnded, &m.WatchdogTimerTs}
}

func pack(s jobState) packedState {
	m := s.m
	p := packedState{
		state: m.State, reason: m.Reason, tickNonce: m.TickNonce, triggers: m.Triggers, failures: m.Failures,
		pending: m.Pending, active: m.Active, backfill: m.Backfill, audit: s.audit,
	}
	if s.health != (Health{}) {
		h := s.health
		p.health = &h
	}
	for i, t := range s.packedTimes() {
		if *t == (time.Time{}) {
			p.nsecs[i] = -1
			continue
		}
		switch loc := t.Location(); {
		case p.locs[0] == nil || p.locs[0] == loc:
			p.locs[0] = loc
		case p.locs[1] == nil || p.locs[1] == loc:
			p.locs[1], p.locIndex[i] = loc, 1
		default:
			whole := s
			return packedState{whole: &whole}
		}
		p.secs[i], p.nsecs[i] = t.Unix(), int32(t.Nanosecond())
	}
	return p
}

func (p *packedState) unpack() jobState {
	if p.whole != nil {
		return *p.whole
	}
	s := jobState{
		m: statemachine.JobState{
			State: p.state, Reason: p.reason, TickNonce: p.tickNonce, Triggers: p.triggers, Failures: p.failures,
			Pending: p.pending, Active: p.active, Backfill: p.backfill,
		},
		audit: p.audit,
	}
	if p.health != nil {
		s.health = *p.health
	}
	for i, t := range s.packedTimes() {
		if p.nsecs[i] >= 0 {
			*t = time.Unix(p.secs[i], int64(p.nsecs[i])).In(p.locs[p.locIndex[i]])
		}
	}
	return s
}

// named returns the job's cached definition if hash names it.
func (c *jobCache) named(jobID, hash string) (*Definition, bool) {
	sh := c.shard(jobID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.m[jobID]
	if e == nil || !e.hasDef || !e.defSum.Names(hash) {
		return nil, false
	}
	return e.d, true
}

// definition decodes and parses an encoded definition of a job.
func (c *jobCache) definition(jobID string, encoded []byte) (*Definition, *schedule.Schedule, error) {
	dg := digestOf(encoded)
	sh := c.shard(jobID)
	sh.mu.Lock()
	if e := sh.m[jobID]; e != nil && e.hasDef && e.def == dg {
		d, s := e.d, e.sched
		sh.mu.Unlock()
		return d, s, nil
	}
	sh.mu.Unlock()
	d, err := decodeDefinition(encoded)
	if err != nil {
		wrapped := fmt.Errorf("job %s: stored definition: %w", jobID, err)
		if newerVersion(encoded, definitionVersion) {
			return nil, nil, wrapped
		}
		return nil, nil, permanent(statemachine.ReasonDefinitionUnreadable, err, wrapped)
	}
	d.intern()
	def := &d
	s, err := def.Parse(jobID)
	if err != nil {
		return nil, nil, permanent(statemachine.ReasonScheduleInvalid, err, fmt.Errorf("job %s: %w", jobID, err))
	}
	sum := store.SumDefinition(encoded)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	e := sh.entry(jobID)
	e.hasDef, e.def, e.defSum, e.d, e.sched = true, dg, sum, def, s
	return def, s, nil
}

// intern makes the definition's strings that many jobs repeat (the
// revision, the schedule, the kinds and policies) share one copy.
func (d *Definition) intern() {
	for _, s := range []*string{&d.Schedule, &d.TimeZone, &d.Gap, &d.Repeat, &d.Target, &d.Revision} {
		*s = internString(*s)
	}
	d.Policy.Overlap = statemachine.Overlap(internString(string(d.Policy.Overlap)))
}

// intern makes a decoded state's words share one copy; the states the
// machine steps to use its constants already.
func (s *jobState) intern() {
	s.m.State = statemachine.State(internString(string(s.m.State)))
	s.m.Reason.Kind = statemachine.ReasonKind(internString(string(s.m.Reason.Kind)))
}

func internString(s string) string {
	if s == "" {
		return ""
	}
	return unique.Make(s).Value()
}

// digest stands for encoded bytes in the engine's cache, which holds an
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
