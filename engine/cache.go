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

// jobCache keeps, per job, its definition decoded and the definition's
// schedule parsed, with the digest of the bytes they were made from.
// Every transaction of a job parses the same definition, and loading a
// zone reads the zone database (docs/benchmarks.md, "One job's memory").
// The job's state is not kept here but in its memo (stateMemo), which the
// store hands back with the record it was put with.
//
// An entry answers only for the exact bytes it was made from.
//
// One entry per job, in plain maps under a lock per shard: a sync.Map
// cost about 100 bytes a job of its own at 100,000 jobs, and its nodes
// were more pointers for every garbage collection to follow.
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

// cacheEntry is never modified, only replaced, and the definition and
// schedule it points to are shared read-only.
type cacheEntry struct {
	def    digest
	d      *Definition
	sched  *schedule.Schedule
	defSum store.DefinitionSum
}

var shardSeed = maphash.MakeSeed()

func (c *jobCache) shard(jobID string) *cacheShard {
	return &c.shards[maphash.String(shardSeed, jobID)%cacheShards]
}

// stateMemo is the engine's store.JobRecord.Memo: the state the record's
// EncodedState holds, packed, and the digest of those bytes. The store
// hands it back only with the record it was put with, so a state put by
// a transaction that never committed is never read; and a state the
// engine steps is read from it with no decoding, which at two
// transactions a launch was 2-3 % of the CPU per launch
// (docs/benchmarks.md, "One job's memory"). The machine's times carry no
// monotonic reading (the engine's clock is read without it), so the memo
// is what decoding the bytes would give, up to the times' locations,
// which nothing reads.
type stateMemo struct {
	encoded digest
	s       packedState
}

// loadState returns the job's state, from its memo if the store handed
// one back, and the digest of the bytes it is.
func loadState(job *store.JobRecord) (jobState, digest, error) {
	if m, ok := job.Memo.(*stateMemo); ok {
		return m.s.unpack().clone(), m.encoded, nil
	}
	s, err := decodeState(job)
	if err != nil {
		return s, digest{}, err
	}
	s.intern()
	return s, digestOf(job.EncodedState), nil
}

// packedState is a jobState in less memory, for the memo each job
// keeps: the machine's five times as seconds and nanoseconds, with an
// index into at most two locations instead of a location pointer each
// (the engine's clock gives one, UTC schedules another), and the health,
// nearly always zero, behind a pointer. Unpacked, it is the jobState it
// was packed from, == for ==, so that it encodes to the bytes its memo
// is for. A state whose times have more locations is kept whole.
type packedState struct {
	state     statemachine.State
	reason    statemachine.Reason
	tickNonce int64
	triggers  int64
	runs      int64
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

const packedTimes = 6

func (s *jobState) packedTimes() [packedTimes]*time.Time {
	m := &s.m
	return [packedTimes]*time.Time{&m.TickAt, &m.NextAt, &m.Cursor, &m.LastEnded, &m.WatchdogTimerTs, &m.PausedUntil}
}

func pack(s jobState) packedState {
	m := s.m
	p := packedState{
		state: m.State, reason: m.Reason, tickNonce: m.TickNonce, triggers: m.Triggers, runs: m.Runs, failures: m.Failures,
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
			State: p.state, Reason: p.reason, TickNonce: p.tickNonce, Triggers: p.triggers, Runs: p.runs, Failures: p.failures,
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
	if e == nil || !e.defSum.Names(hash) {
		return nil, false
	}
	return e.d, true
}

// definition decodes and parses an encoded definition of a job.
func (c *jobCache) definition(jobID string, encoded []byte) (*Definition, *schedule.Schedule, error) {
	dg := digestOf(encoded)
	sh := c.shard(jobID)
	sh.mu.Lock()
	if e := sh.m[jobID]; e != nil && e.def == dg {
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
	e := &cacheEntry{def: dg, d: def, sched: s, defSum: store.SumDefinition(encoded)}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.m == nil {
		sh.m = map[string]*cacheEntry{}
	}
	sh.m[jobID] = e
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

// digest stands for encoded bytes in the engine's cache and in the memos,
// one each per job: keeping a copy of the bytes instead took a fifth of
// the live heap of 10,000 jobs (docs/benchmarks.md, "One job's memory").
// It is two independently seeded 64-bit hashes, so two different
// encodings share a digest with a chance of about 2^-128; 16 bytes, so
// that a stateMemo fits the 256-byte size class and a cacheEntry the
// 64-byte one.
type digest struct{ a, b uint64 }

var digestSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

func digestOf(encoded []byte) digest {
	return digest{maphash.Bytes(digestSeeds[0], encoded), maphash.Bytes(digestSeeds[1], encoded)}
}
