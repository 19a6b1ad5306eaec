// Package storetest is the conformance suite of store.Store: every backend
// runs Run from its own tests and must pass it unchanged.
//
// Its files follow the concerns of the contract: records (every field
// round-trips), definitions, transactions, memo, tasks (enqueued in a
// transaction), conflicts (concurrent and submitted Updates), paging and
// listings, a project's invocations across its jobs, retention (expiry and
// deletes) and projects (the record a config revision writes).
//
// The suite holds to what Cloud Datastore can promise, so the embedded and
// the cloud backend are held to one contract. Where backends may differ it
// says so here, and in the test that meets the difference, rather than
// testing either's quirks:
//
//   - Times: backends keep at least microseconds (Datastore's precision;
//     store/sqlite keeps nanoseconds). The suite uses microsecond instants
//     in a non-UTC zone and compares with Equal: a backend returns the
//     same instant, in whatever location.
//   - Byte slices: nil and empty are the same value.
//   - Consistency: the suite reads right after writing and expects to see
//     the writes, outside transactions and across groups too (Jobs,
//     Overdue). SQLite gives that, and so does Firestore in Datastore
//     mode, which production runs and store/datastore's tests run
//     (--firestore_in_datastore_mode). Legacy Cloud Datastore's queries
//     across groups were eventually consistent and would not pass: the
//     engine does not rely on them (Overdue "may be stale"), the suite
//     does.
//   - Conflicts: Update may give up with store.ErrConflict under heavy
//     contention on one group (Datastore does, after a bounded number of
//     its own retries; SQLite waits). The suite retries those calls, as
//     the engine does, and still counts every committed Update.
//   - Tasks: a backend whose tasks live in the store implements TaskStore,
//     and the suite then checks the stored tasks as well as what Update
//     returns. A backend whose queue cannot join the transaction is checked
//     on what Update returns, and the test logs that it was. A task whose
//     name an earlier transaction enqueued is still one task, but Update
//     may return it again: posting it again is harmless.
//   - Submit: store.Submitter is optional (both backends have it); the
//     test of submitted Updates skips a backend without it, and says so.
//   - Memo: a backend may hand a committed job's Memo back from a later
//     Tx.Job in place of its EncodedState (store/sqlite's cache does) or
//     never (store/datastore); the suite accepts either, never another
//     state's.
//   - ProjectInvocations' ties: records of one occurrence are listed in
//     the backend's order (store/sqlite: by job id and id, descending;
//     store/datastore: by key). The suite checks that a listing holds
//     each record once, newest first, not the order of ties.
//   - Expired's order: store/sqlite lists the oldest records first,
//     store/datastore the newest first (the order its index serves). The
//     suite checks which records are listed, and that a limit lists that
//     many of them, not which.
//   - Transactions touch only their own job's group, as Datastore requires.
//   - Size: every backend implements Footprint (in its tests, if not
//     elsewhere), counting bytes as it stores them, so the suite can check
//     what grows with what.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task"
)

// TaskStore is implemented by backends whose tasks are rows committed with
// the transaction (store/sqlite).
type TaskStore interface {
	// Tasks lists up to limit queued tasks, earliest ETA first.
	Tasks(ctx context.Context, limit int) ([]task.Task, error)
}

// Footprint tells how many bytes a store holds, as its backend counts them:
// a SQLite file's pages, Datastore entities' properties.
type Footprint interface {
	StoredBytes(ctx context.Context) (int64, error)
}

// Run runs the suite. open returns a new, empty store and closes it when
// the test ends (t.Cleanup). Subtests run in parallel, each on its own
// store.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		// records.go
		{"every job field round-trips", testJobRoundTrip},
		{"every invocation field round-trips", testInvocationRoundTrip},
		{"missing job and invocation are ErrNotFound", testNotFound},
		{"HasInvocations answers as Invocation would, for any number of ids", testHasInvocations},
		// definitions.go
		{"a definition is stored per job and hash, and only if committed", testDefinitions},
		{"invocations that share a definition share its stored bytes", testDefinitionStoredOnce},
		// transactions.go
		{"a transaction reads its own writes", testReadsOwnWrites},
		{"fn returning an error writes nothing", testFnErrorWritesNothing},
		{"a transaction writes only its own group", testOwnGroupOnly},
		{"a cancelled Update does not run", testCancelled},
		// memo.go
		{"a Memo comes back only with the state it was put with, and is never stored", testMemo},
		// tasks.go
		{"Update returns the tasks it enqueued", testReturnsEnqueued},
		{"a repeated task name is one task", testDuplicateTaskName},
		// conflicts.go
		{"concurrent Updates of one job lose nothing", testConcurrentOneJob},
		{"concurrent Updates of many jobs lose nothing", testConcurrentManyJobs},
		{"Updates submitted together, of one job and of many, lose nothing", testSubmitted},
		// paging.go
		{"Invocations pages newest first without gaps or repeats", testInvocationsPaging},
		{"Jobs pages by id, per project and for all", testJobsPaging},
		{"a cursor the listing did not make is ErrInvalidCursor", testInvalidCursor},
		// listings.go
		{"Overdue lists set, passed watchdog timers, most overdue first", testOverdue},
		{"Recent reads each job's newest invocations, without logs", testRecent},
		// projectinvocations.go
		{"ProjectInvocations lists a project's records across its jobs, newest first, by class, job and time", testProjectInvocations},
		{"a record moves between ProjectInvocations' classes with its status", testProjectInvocationsFollowStatus},
		{"ProjectInvocations refuses a cursor it did not make", testProjectInvocationsCursor},
		// retention.go
		{"Expired lists finished records past the age or count of their class, never unfinished ones", testExpired},
		{"DeleteInvocation deletes a finished record and leaves an unfinished one", testDeleteInvocation},
		{"a record put and deleted in one transaction is refused", testDeleteAfterPutRefused},
		// projects.go
		{"a project's record is written whole and listed by id", testProjects},
		{"concurrent UpdateProjects of one record lose nothing", testUpdateProject},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

// t0 is the suite's anchor: a microsecond instant in a zone that is not
// UTC, so a backend that drops the zone still has to keep the instant.
var t0 = time.Date(2026, 3, 8, 9, 30, 15, 123456000, time.FixedZone("UTC+5:30", 5*3600+1800))

var errBoom = errors.New("boom")

func job(id string) *store.JobRecord {
	return &store.JobRecord{ID: id, Project: jobid.Split(id).Project, State: "SCHEDULED"}
}

// put writes jobs (and nothing else) in their own Updates.
func put(t *testing.T, s store.Store, jobs ...*store.JobRecord) {
	t.Helper()
	for _, j := range jobs {
		if _, err := s.Update(t.Context(), j.ID, func(tx store.Tx) error { return tx.PutJob(j) }); err != nil {
			t.Fatalf("put job %s: %v", j.ID, err)
		}
	}
}

func putInvs(t *testing.T, s store.Store, jobID string, invs ...*store.InvocationRecord) {
	t.Helper()
	_, err := s.Update(t.Context(), jobID, func(tx store.Tx) error {
		for _, inv := range invs {
			if err := tx.PutInvocation(inv); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("put invocations of %s: %v", jobID, err)
	}
}

func sameJob(a, b *store.JobRecord) bool {
	return a.ID == b.ID && a.Project == b.Project && a.State == b.State &&
		a.WatchdogTimerTs.Equal(b.WatchdogTimerTs) &&
		bytes.Equal(a.Definition, b.Definition) && bytes.Equal(a.EncodedState, b.EncodedState)
}

func sameInvocation(a, b *store.InvocationRecord) bool {
	return a.JobID == b.JobID && a.ID == b.ID && a.Occurrence.Equal(b.Occurrence) &&
		a.Status == b.Status && a.Attempt == b.Attempt && a.Manual == b.Manual && a.TriggeredBy == b.TriggeredBy && a.Backfill == b.Backfill &&
		a.Created.Equal(b.Created) && a.Started.Equal(b.Started) && a.Ended.Equal(b.Ended) &&
		a.Message == b.Message && a.Reason == b.Reason && a.Count == b.Count && a.Last.Equal(b.Last) &&
		a.DefinitionHash == b.DefinitionHash && bytes.Equal(a.Definition, b.Definition) && bytes.Equal(a.Log, b.Log)
}

func sameTasks(a, b []task.Task) bool {
	return slices.EqualFunc(a, b, func(x, y task.Task) bool {
		return x.Kind == y.Kind && x.JobID == y.JobID && x.Nonce == y.Nonce && x.ETA.Equal(y.ETA) &&
			x.Invocation == y.Invocation && x.Attempt == y.Attempt
	})
}

// storedTasks returns the backend's queued tasks, or ok false for a
// backend whose tasks do not live in the store; the test says so, so that
// a check left out is seen in its log.
func storedTasks(t *testing.T, s store.Store) (tasks []task.Task, ok bool) {
	t.Helper()
	ts, ok := s.(TaskStore)
	if !ok {
		t.Logf("%T keeps no tasks (storetest.TaskStore): checked on what Update returns only", s)
		return nil, false
	}
	tasks, err := ts.Tasks(t.Context(), 1000)
	if err != nil {
		t.Fatalf("Tasks: %v", err)
	}
	return tasks, true
}

// readJob checks the job both inside a transaction and outside.
func readJob(t *testing.T, s store.Store, id string, want *store.JobRecord) {
	t.Helper()
	got, err := s.Job(t.Context(), id)
	if err != nil {
		t.Fatalf("Job(%s): %v", id, err)
	}
	if !sameJob(got, want) {
		t.Errorf("Job(%s) =\n%+v\nwant\n%+v", id, got, want)
	}
	_, err = s.Update(t.Context(), id, func(tx store.Tx) error {
		got, err := tx.Job()
		if err != nil {
			return err
		}
		if !sameJob(got, want) {
			t.Errorf("Tx.Job() of %s =\n%+v\nwant\n%+v", id, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Update(%s) reading: %v", id, err)
	}
}

func readInvocation(t *testing.T, s store.Store, want *store.InvocationRecord) {
	t.Helper()
	got, err := s.Invocation(t.Context(), want.JobID, want.ID)
	if err != nil {
		t.Fatalf("Invocation(%s, %s): %v", want.JobID, want.ID, err)
	}
	if !sameInvocation(got, want) {
		t.Errorf("Invocation(%s, %s) =\n%+v\nwant\n%+v", want.JobID, want.ID, got, want)
	}
	_, err = s.Update(t.Context(), want.JobID, func(tx store.Tx) error {
		got, err := tx.Invocation(want.ID)
		if err != nil {
			return err
		}
		if !sameInvocation(got, want) {
			t.Errorf("Tx.Invocation(%s) of %s =\n%+v\nwant\n%+v", want.ID, want.JobID, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Update(%s) reading: %v", want.JobID, err)
	}
}
