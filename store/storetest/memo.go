package storetest

import (
	"errors"
	"testing"

	"github.com/sundial-cron/sundial/store"
)

// memo is what a writer attaches to a job it puts; compared by pointer.
type memo struct{ state string }

func withMemo(id, state string) (*store.JobRecord, *memo) {
	j := job(id)
	m := &memo{state}
	j.EncodedState, j.Memo = []byte(state), m
	return j, m
}

func testMemo(t *testing.T, s store.Store) {
	ctx := t.Context()
	j, m := withMemo("proj/a", "one")
	var inTx *store.JobRecord
	if _, err := s.Update(ctx, j.ID, func(tx store.Tx) error {
		if err := tx.PutJob(j); err != nil {
			return err
		}
		var err error
		inTx, err = tx.Job()
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if inTx.Memo != m || string(inTx.EncodedState) != "one" {
		t.Errorf("Job after PutJob in one transaction: memo %v, state %q; want the put ones", inTx.Memo, inTx.EncodedState)
	}
	// checkRead reads the job in a transaction: its state must be want's,
	// as bytes or as want's memo, whichever the backend hands back.
	checkRead := func(what, want string, wantMemo *memo) {
		t.Helper()
		var got *store.JobRecord
		if _, err := s.Update(ctx, j.ID, func(tx store.Tx) error {
			var err error
			got, err = tx.Job()
			return err
		}); err != nil {
			t.Fatal(err)
		}
		switch {
		case got.Memo == nil && string(got.EncodedState) == want:
		case got.Memo == nil:
			t.Errorf("%s: state %q, want %q", what, got.EncodedState, want)
		case got.Memo != wantMemo:
			t.Errorf("%s: memo %v, want %v or none", what, got.Memo, wantMemo)
		case got.EncodedState != nil && string(got.EncodedState) != want:
			t.Errorf("%s: memo %v with state %q, want %q or none", what, got.Memo, got.EncodedState, want)
		}
	}
	checkRead("after a commit", "one", m)
	// The record as it comes back, put back as it is by a writer that
	// changed something else: refused if its state is only in the memo.
	if _, err := s.Update(ctx, j.ID, func(tx store.Tx) error {
		got, err := tx.Job()
		if err != nil {
			return err
		}
		got.State = "PAUSED"
		if err := tx.PutJob(got); got.EncodedState == nil && err == nil {
			t.Error("PutJob took back a record with a memo and no state")
		}
		return errBoom
	}); !errors.Is(err, errBoom) {
		t.Fatalf("Update = %v, want %v", err, errBoom)
	}
	stored, err := s.Job(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Memo != nil || string(stored.EncodedState) != "one" {
		t.Errorf("read outside a transaction: memo %v, state %q; want no memo and %q", stored.Memo, stored.EncodedState, "one")
	}

	// Whatever the store hands back, a record with a memo and no state
	// is refused, and the Update with it.
	bare := job(j.ID)
	bare.Memo = m
	if _, err := s.Update(ctx, j.ID, func(tx store.Tx) error { return tx.PutJob(bare) }); err == nil {
		t.Error("an Update put a job with a memo and no state")
	}
	checkRead("after a refused put", "one", m)

	// A put that never commits: its memo never comes back.
	uncommitted, _ := withMemo(j.ID, "two")
	if _, err := s.Update(ctx, j.ID, func(tx store.Tx) error {
		if err := tx.PutJob(uncommitted); err != nil {
			return err
		}
		return errBoom
	}); !errors.Is(err, errBoom) {
		t.Fatalf("Update = %v, want %v", err, errBoom)
	}
	checkRead("after a put that did not commit", "one", m)

	// A put without a memo: the state is its bytes again.
	plain := job(j.ID)
	plain.EncodedState = []byte("three")
	put(t, s, plain)
	checkRead("after a put without a memo", "three", nil)
}
