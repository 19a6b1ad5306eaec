package engine

import (
	"testing"
	"time"

	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// The engine's cache answers only for the bytes its entry was made from:
// a state put by a transaction that never committed is not the one the
// store's bytes decode to, nor is a definition the job no longer has.
func TestJobCacheAnswersOnlyForItsBytes(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	encode := func(nonce int64) (jobState, []byte) {
		s := jobState{m: statemachine.JobState{State: statemachine.Scheduled, TickNonce: nonce, TickAt: at, NextAt: at, WatchdogTimerTs: at}}
		b, err := encodeJobState(s)
		if err != nil {
			t.Fatal(err)
		}
		return s, b
	}
	var c jobCache
	committedState, committedBytes := encode(1)
	c.putState("p/j", committedBytes, committedState)
	// The next transaction steps the job and puts its state, then fails
	// to commit: the store still holds committedBytes.
	uncommitted, uncommittedBytes := encode(2)
	c.putState("p/j", uncommittedBytes, uncommitted)
	got, err := c.state(&store.JobRecord{ID: "p/j", EncodedState: committedBytes})
	if err != nil {
		t.Fatal(err)
	}
	if got.m.TickNonce != 1 {
		t.Errorf("the cache answered tick nonce %d for the committed bytes, which hold 1", got.m.TickNonce)
	}
	if got, err := c.state(&store.JobRecord{ID: "p/other", EncodedState: uncommittedBytes}); err != nil || got.m.TickNonce != 2 {
		t.Errorf("another job with the same bytes: nonce %d (%v), want 2", got.m.TickNonce, err)
	}

	defBytes := func(sched string) []byte {
		b, err := encodeDefinition(Definition{Schedule: sched, Target: "noop"})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	old, cur := defBytes("*/5 * * * *"), defBytes("0 * * * *")
	if _, _, err := c.definition("p/j", old); err != nil {
		t.Fatal(err)
	}
	d, s, err := c.definition("p/j", cur)
	if err != nil {
		t.Fatal(err)
	}
	if d.Schedule != "0 * * * *" || s.String() != "0 * * * *" {
		t.Errorf("the current definition's bytes got schedule %q, parsed %q", d.Schedule, s)
	}
	if _, ok := c.named("p/j", store.DefinitionHash(old)); ok {
		t.Error("the cache answered for the job's former definition's hash")
	}
	if d, ok := c.named("p/j", store.DefinitionHash(cur)); !ok || d.Schedule != "0 * * * *" {
		t.Errorf("the current definition's hash: %v, %v", d, ok)
	}
	if _, ok := c.named("p/other", store.DefinitionHash(cur)); ok {
		t.Error("the cache answered for a job that has no definition cached")
	}
}
