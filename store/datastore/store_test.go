package datastore

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/datastore"

	"github.com/sundial-cron/sundial/store"
)

// The emulator runs with --require_indexes on index.yaml: a query whose
// index index.yaml does not declare fails, as it would in production,
// while the store's own queries (the conformance suite) run.
func TestQueryWithoutDeclaredIndexFails(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{}, nil)
	if _, err := s.Update(t.Context(), "proj/a", func(tx store.Tx) error {
		return tx.PutInvocation(&store.InvocationRecord{JobID: "proj/a", ID: "i1", Occurrence: time.Unix(1e9, 0), Status: "QUEUED"})
	}); err != nil {
		t.Fatal(err)
	}
	// Oldest first: index.yaml declares only the descending index.
	q := datastore.NewQuery(kindInvocation).Namespace(s.opts.Namespace).Ancestor(s.jobKey("proj/a")).Order("Occurrence")
	_, err := s.client.GetAll(t.Context(), q, &[]invocationEntity{})
	if err == nil || !strings.Contains(err.Error(), "requires a composite index") {
		t.Errorf("a query on an undeclared index: error %v, want one about the missing index", err)
	}
}

// Two transactions that both read the job and then write it cannot both
// commit. With one attempt each, the loser's Update is ErrConflict and
// writes nothing; the winner's write is the only one.
func TestConflictGivesUpAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{MaxAttempts: 1}, nil)
	const id = "proj/contended"
	if _, err := s.Update(t.Context(), id, func(tx store.Tx) error {
		return tx.PutJob(&store.JobRecord{ID: id, Project: "proj", State: "SCHEDULED"})
	}); err != nil {
		t.Fatal(err)
	}
	var read sync.WaitGroup
	read.Add(2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, state := range []string{"RUNNING", "PAUSED"} {
		wg.Go(func() {
			_, errs[i] = s.Update(t.Context(), id, func(tx store.Tx) error {
				j, err := tx.Job()
				read.Done()
				if err != nil {
					return err
				}
				// Both have read the job before either writes it.
				read.Wait()
				j.State = state
				return tx.PutJob(j)
			})
		})
	}
	wg.Wait()
	var won []int
	for i, err := range errs {
		switch {
		case err == nil:
			won = append(won, i)
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("Update %d: error %v, want nil or ErrConflict", i, err)
		}
	}
	if len(won) != 1 {
		t.Fatalf("%d of 2 contending Updates committed (errors %v), want 1", len(won), errs)
	}
	j, err := s.Job(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"RUNNING", "PAUSED"}[won[0]]; j.State != want {
		t.Errorf("job state %s, want the winner's %s", j.State, want)
	}
}

// Datastore refuses entities over 1 MiB with an opaque error; the store
// refuses them first, naming the fields, and writes nothing.
func TestOversizedEntityIsRefused(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{}, nil)
	big := make([]byte, 1<<20)
	_, err := s.Update(t.Context(), "proj/a", func(tx store.Tx) error {
		if err := tx.PutJob(&store.JobRecord{ID: "proj/a", Project: "proj"}); err != nil {
			return err
		}
		return tx.PutInvocation(&store.InvocationRecord{JobID: "proj/a", ID: "i1", Status: "FAILED", Log: big})
	})
	if err == nil || !strings.Contains(err.Error(), "Definition and Log hold 1048576 bytes") {
		t.Errorf("Update with a 1 MiB log: error %v, want one naming the invocation's blobs", err)
	}
	if _, err := s.Job(t.Context(), "proj/a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused Update wrote the job: Job error %v", err)
	}
}

// A panic in fn reaches the caller; the transaction writes nothing and
// holds no lock on the job afterwards.
func TestPanicInFnReachesTheCaller(t *testing.T) {
	// Not parallel: its one-attempt Update must not meet the emulator's
	// aborts under the other tests' load (seen under -race), only the lock
	// the panicking transaction might have kept.
	s := openStore(t, Options{MaxAttempts: 1}, nil)
	func() {
		defer func() {
			if p := recover(); p != "fn broke" {
				t.Errorf("recovered %v, want fn's panic", p)
			}
		}()
		_, _ = s.Update(t.Context(), "proj/a", func(tx store.Tx) error {
			if _, err := tx.Job(); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Tx.Job() of a new job: %v", err)
			}
			_ = tx.PutJob(&store.JobRecord{ID: "proj/a", Project: "proj", State: "PANICKED"})
			panic("fn broke")
		})
	}()
	if _, err := s.Job(t.Context(), "proj/a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the panicking fn's write was committed: Job error %v", err)
	}
	// One attempt: a lock the panicking transaction still held would make
	// this conflict.
	if _, err := s.Update(t.Context(), "proj/a", func(tx store.Tx) error {
		if _, err := tx.Job(); !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return tx.PutJob(&store.JobRecord{ID: "proj/a", Project: "proj", State: "SCHEDULED"})
	}); err != nil {
		t.Fatalf("Update after a panic: %v", err)
	}
}

// An empty job id would name no entity (Datastore reads it as an
// incomplete key); Update refuses it before starting a transaction.
func TestUpdateOfEmptyJobIDIsRefused(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{}, nil)
	called := false
	_, err := s.Update(t.Context(), "", func(store.Tx) error {
		called = true
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "empty job id") {
		t.Errorf("Update(\"\"): error %v, want one naming the empty job id", err)
	}
	if called {
		t.Error("Update(\"\") ran fn")
	}
}

// Datastore takes any bytes as a cursor; bytes behind the listing's mark
// that are no position in its index are still the caller's error.
func TestCursorOfGarbageBytesIsInvalid(t *testing.T) {
	t.Parallel()
	s := openStore(t, Options{}, nil)
	for _, c := range []struct{ listing, cursor string }{{"Jobs", "jZ2FyYmFnZQ"}, {"Invocations", "iZ2FyYmFnZQ"}} {
		var err error
		if c.listing == "Jobs" {
			_, _, err = s.Jobs(t.Context(), "", store.Page{Cursor: c.cursor})
		} else {
			_, _, err = s.Invocations(t.Context(), "proj/a", store.Page{Cursor: c.cursor})
		}
		if !errors.Is(err, store.ErrInvalidCursor) {
			t.Errorf("%s with cursor %q: error %v, want ErrInvalidCursor", c.listing, c.cursor, err)
		}
	}
}
