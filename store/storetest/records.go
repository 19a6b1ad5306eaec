package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
)

func testJobRoundTrip(t *testing.T, s store.Store) {
	full := &store.JobRecord{
		ID:              "proj/full",
		Project:         "proj",
		State:           "RUNNING",
		WatchdogTimerTs: t0.Add(90 * time.Second),
		Definition:      []byte("definition \x00\xff bytes"),
		EncodedState:    []byte{0, 1, 2, 254, 255},
	}
	put(t, s, full)
	readJob(t, s, full.ID, full)

	// Overwriting replaces every field, down to zero values.
	bare := &store.JobRecord{ID: "proj/full", Project: "other", State: "PAUSED"}
	put(t, s, bare)
	readJob(t, s, bare.ID, bare)
}

func testInvocationRoundTrip(t *testing.T, s store.Store) {
	put(t, s, job("proj/a"))
	full := &store.InvocationRecord{
		JobID:      "proj/a",
		ID:         "20260308T040000Z",
		Occurrence: t0,
		Status:     "SKIPPED",
		Attempt:    3,
		Manual:     true,
		// As access.Identity writes it.
		TriggeredBy: "user:alice@example.com",
		Backfill:    true,
		Created:     t0.Add(time.Microsecond),
		Started:     t0.Add(2 * time.Second),
		Ended:       t0.Add(time.Hour + 7*time.Microsecond),
		Message:     "overrun: the previous invocation was still running",
		Reason:      "overrun",
		Count:       17,
		Last:        t0.Add(16 * time.Minute),
		// A record names its definition; one an older release wrote
		// holds the bytes, and is rewritten with them.
		DefinitionHash: store.DefinitionHash([]byte("def")),
		Definition:     []byte("def"),
		Log:            []byte("line 1\nline 2\n\x00"),
	}
	putInvs(t, s, full.JobID, full)
	readInvocation(t, s, full)

	bare := &store.InvocationRecord{JobID: "proj/a", ID: full.ID, Occurrence: t0.Add(-time.Minute), Status: "QUEUED"}
	putInvs(t, s, bare.JobID, bare)
	readInvocation(t, s, bare)
}

func testNotFound(t *testing.T, s store.Store) {
	ctx := t.Context()
	put(t, s, job("proj/exists"))
	if _, err := s.Job(ctx, "proj/missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Job(missing) error = %v, want ErrNotFound", err)
	}
	if _, err := s.Invocation(ctx, "proj/missing", "x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Invocation of a missing job: error = %v, want ErrNotFound", err)
	}
	if _, err := s.Invocation(ctx, "proj/exists", "x"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing Invocation of a job: error = %v, want ErrNotFound", err)
	}
	for _, id := range []string{"proj/missing", "proj/exists"} {
		_, err := s.Update(ctx, id, func(tx store.Tx) error {
			if id == "proj/missing" {
				if _, err := tx.Job(); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("Tx.Job() of a missing job: error = %v, want ErrNotFound", err)
				}
			}
			if _, err := tx.Invocation("x"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Tx.Invocation(missing) in %s: error = %v, want ErrNotFound", id, err)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Update(%s) that only reads: %v", id, err)
		}
	}
	// The read-only Update of the missing job created nothing.
	if _, err := s.Job(ctx, "proj/missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Job(missing) after a read-only Update: error = %v, want ErrNotFound", err)
	}
}

func testHasInvocations(t *testing.T, s store.Store) {
	put(t, s, job("proj/a"), job("proj/b"))
	// More ids than one read answers, with records on both sides of the
	// cut, and one id only the other job has.
	ids := make([]string, store.MaxHasInvocations+500)
	for i := range ids {
		ids[i] = fmt.Sprintf("2026%04dT000000Z", i)
	}
	at := func(i int) *store.InvocationRecord {
		return &store.InvocationRecord{JobID: "proj/a", ID: ids[i], Occurrence: t0, Status: "SUCCEEDED"}
	}
	putInvs(t, s, "proj/a", at(0), at(7), at(store.MaxHasInvocations-1), at(store.MaxHasInvocations), at(len(ids)-1))
	putInvs(t, s, "proj/b", &store.InvocationRecord{JobID: "proj/b", ID: ids[3], Occurrence: t0, Status: "SUCCEEDED"})
	want := map[string]bool{ids[0]: true, ids[7]: true, ids[store.MaxHasInvocations-1]: true, ids[store.MaxHasInvocations]: true, ids[len(ids)-1]: true}

	var problems []string // of fn's last run: it may run more than once
	_, err := s.Update(t.Context(), "proj/a", func(tx store.Tx) error {
		problems = nil
		if has, err := tx.HasInvocations(nil); err != nil || len(has) != 0 {
			return fmt.Errorf("HasInvocations(nil) = %v, %w; want none", has, err)
		}
		// Read before: the answer must not depend on it.
		if _, err := tx.Invocation(ids[7]); err != nil {
			return err
		}
		// Put in this transaction: the answer sees it, as Invocation does.
		if err := tx.PutInvocation(at(5)); err != nil {
			return err
		}
		has, err := tx.HasInvocations(ids)
		if err != nil {
			return err
		}
		if len(has) != len(ids) {
			return fmt.Errorf("HasInvocations of %d ids gave %d answers", len(ids), len(has))
		}
		for i, id := range ids {
			_, err := tx.Invocation(id)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			if w := want[id] || i == 5; has[i] != w || has[i] != (err == nil) {
				problems = append(problems, fmt.Sprintf("%s: HasInvocations says %v, want %v (Invocation: %v)", id, has[i], w, err))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}
