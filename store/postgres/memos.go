package postgres

import (
	"hash/maphash"
	"sync"

	"github.com/sundial-cron/sundial/store"
)

// memos keeps, per job, the engine's memo of the state this instance last
// committed (store.JobRecord.Memo) with a digest of the bytes it encodes
// to. A job read in a batch whose state is still those bytes is handed
// back with the memo in place of them, so that the engine steps it
// without decoding: at 100,000 every-minute jobs, decoding each job's
// state twice a launch was a seventh of the instance's CPU, and half of
// that was the goroutines' stacks growing for encoding/json's recursion.
//
// The bytes read decide, not this instance's view of the job: another
// instance that wrote the job wrote other bytes, and the state is decoded
// from them. A memo answers only for the exact bytes it was made from
// (a 128-bit digest under seeds chosen at start, which no stored state
// can be made to collide with), so a job whose state came back to those
// bytes gets the memo of that very state.
//
// One entry per job this instance committed a state of, in plain maps
// under a lock per shard, as the engine's job cache.
type memos struct {
	shards [memoShards]memoShard
}

const memoShards = 64

type memoShard struct {
	mu sync.Mutex
	m  map[string]memo
}

type memo struct {
	sum stateSum
	v   any
}

type stateSum struct{ a, b uint64 }

var memoSeeds = [3]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed(), maphash.MakeSeed()}

func sumOf(encoded []byte) stateSum {
	return stateSum{maphash.Bytes(memoSeeds[0], encoded), maphash.Bytes(memoSeeds[1], encoded)}
}

func (m *memos) shard(jobID string) *memoShard {
	return &m.shards[maphash.String(memoSeeds[2], jobID)%memoShards]
}

// attach gives j the memo of its state, if one is kept for these bytes,
// in place of them (store.JobRecord.Memo).
func (m *memos) attach(j *store.JobRecord) {
	sh := m.shard(j.ID)
	sh.mu.Lock()
	e, ok := sh.m[j.ID]
	sh.mu.Unlock()
	if ok && e.sum == sumOf(j.EncodedState) {
		j.Memo, j.EncodedState = e.v, nil
	}
}

// committed records the job a committed transaction put: its memo, or
// none if it was put without one.
func (m *memos) committed(j *store.JobRecord) {
	sh := m.shard(j.ID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if j.Memo == nil {
		delete(sh.m, j.ID)
		return
	}
	if sh.m == nil {
		sh.m = map[string]memo{}
	}
	sh.m[j.ID] = memo{sumOf(j.EncodedState), j.Memo}
}
