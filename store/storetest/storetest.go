// Package storetest is the conformance suite of store.Store: every backend
// runs Run from its own tests and must pass it unchanged.
//
// The suite holds to what Cloud Datastore can promise, so the embedded and
// the cloud backend are held to one contract. Where backends may differ it
// says so here rather than testing either's quirks:
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
//     on what Update returns.
//   - Transactions touch only their own job's group, as Datastore requires.
//   - Size: every backend implements Footprint (in its tests, if not
//     elsewhere), counting bytes as it stores them, so the suite can check
//     what grows with what.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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
		{"every job field round-trips", testJobRoundTrip},
		{"every invocation field round-trips", testInvocationRoundTrip},
		{"missing job and invocation are ErrNotFound", testNotFound},
		{"HasInvocations answers as Invocation would, for any number of ids", testHasInvocations},
		{"a definition is stored per job and hash, and only if committed", testDefinitions},
		{"invocations that share a definition share its stored bytes", testDefinitionStoredOnce},
		{"a transaction reads its own writes", testReadsOwnWrites},
		{"fn returning an error writes nothing", testFnErrorWritesNothing},
		{"a Memo comes back only with the state it was put with, and is never stored", testMemo},
		{"Update returns the tasks it enqueued", testReturnsEnqueued},
		{"a repeated task name is one task", testDuplicateTaskName},
		{"a transaction writes only its own group", testOwnGroupOnly},
		{"a cancelled Update does not run", testCancelled},
		{"concurrent Updates of one job lose nothing", testConcurrentOneJob},
		{"concurrent Updates of many jobs lose nothing", testConcurrentManyJobs},
		{"Updates submitted together, of one job and of many, lose nothing", testSubmitted},
		{"Overdue lists set, passed watchdog timers, most overdue first", testOverdue},
		{"Invocations pages newest first without gaps or repeats", testInvocationsPaging},
		{"Jobs pages by id, per project and for all", testJobsPaging},
		{"a cursor the listing did not make is ErrInvalidCursor", testInvalidCursor},
		{"a project's record is written whole and listed by id", testProjects},
		{"Expired lists finished records past the age or count of their class, never unfinished ones", testExpired},
		{"DeleteInvocation deletes a finished record and leaves an unfinished one", testDeleteInvocation},
		{"a record put and deleted in one transaction is refused", testDeleteAfterPutRefused},
		{"concurrent UpdateProjects of one record lose nothing", testUpdateProject},
		{"Recent reads each job's newest invocations, without logs", testRecent},
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
	project, _, _ := strings.Cut(id, "/")
	return &store.JobRecord{ID: id, Project: project, State: "SCHEDULED"}
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
// backend whose tasks do not live in the store.
func storedTasks(t *testing.T, s store.Store) (tasks []task.Task, ok bool) {
	t.Helper()
	ts, ok := s.(TaskStore)
	if !ok {
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

// putDefinitions puts a job's definitions in one Update, and fails it with
// fail if that is not nil.
func putDefinitions(ctx context.Context, s store.Store, jobID string, fail error, defs ...[]byte) ([]string, error) {
	var hashes []string
	_, err := s.Update(ctx, jobID, func(tx store.Tx) error {
		hashes = hashes[:0]
		for _, d := range defs {
			h, err := tx.PutDefinition(d)
			if err != nil {
				return err
			}
			hashes = append(hashes, h)
		}
		return fail
	})
	return hashes, err
}

func readDefinition(t *testing.T, s store.Store, jobID, hash string, want []byte) {
	t.Helper()
	got, err := s.Definition(t.Context(), jobID, hash)
	switch {
	case want == nil && !errors.Is(err, store.ErrNotFound):
		t.Errorf("Definition(%s, %.8s) = %d bytes, %v; want ErrNotFound", jobID, hash, len(got), err)
	case want != nil && (err != nil || !bytes.Equal(got, want)):
		t.Errorf("Definition(%s, %.8s) = %q, %v; want %q", jobID, hash, got, err, want)
	}
}

func testDefinitions(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, b := []byte("definition a \x00\xff"), []byte("definition b")
	put(t, s, job("proj/a"), job("proj/b"))

	hashes, err := putDefinitions(ctx, s, "proj/a", errBoom, a)
	if !errors.Is(err, errBoom) {
		t.Fatalf("Update error = %v, want fn's error", err)
	}
	if len(hashes) != 1 || hashes[0] != store.DefinitionHash(a) {
		t.Fatalf("PutDefinition = %v, want its DefinitionHash %s", hashes, store.DefinitionHash(a))
	}
	readDefinition(t, s, "proj/a", hashes[0], nil)

	// The same again, now committed, twice in one transaction and with
	// another; what failed above must not pass for stored.
	hashes, err = putDefinitions(ctx, s, "proj/a", nil, a, b, a)
	if err != nil {
		t.Fatal(err)
	}
	ha, hb := store.DefinitionHash(a), store.DefinitionHash(b)
	if !slices.Equal(hashes, []string{ha, hb, ha}) {
		t.Errorf("PutDefinition of a, b, a = %v, want %v", hashes, []string{ha, hb, ha})
	}
	readDefinition(t, s, "proj/a", ha, a)
	readDefinition(t, s, "proj/a", hb, b)
	readDefinition(t, s, "proj/a", store.DefinitionHash([]byte("never put")), nil)
	// Definitions belong to their job's group.
	readDefinition(t, s, "proj/b", ha, nil)
	if _, err := putDefinitions(ctx, s, "proj/b", nil, a); err != nil {
		t.Fatal(err)
	}
	readDefinition(t, s, "proj/b", ha, a)
	// Putting a stored one again changes nothing.
	if _, err := putDefinitions(ctx, s, "proj/a", nil, a); err != nil {
		t.Fatal(err)
	}
	readDefinition(t, s, "proj/a", ha, a)
}

// A large definition and many invocations that run under it, each created
// in its own transaction that puts the definition, as the engine does: the
// store grows by about one copy of it, not one per invocation.
func testDefinitionStoredOnce(t *testing.T, s store.Store) {
	fp, ok := s.(Footprint)
	if !ok {
		t.Fatalf("%T does not implement storetest.Footprint", s)
	}
	ctx := t.Context()
	def := make([]byte, 256<<10)
	for i := range def {
		def[i] = byte(i * 7919 >> 3) // not a run that a backend might compress
	}
	put(t, s, job("proj/big"))
	before, err := fp.StoredBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	for i := range n {
		_, err := s.Update(ctx, "proj/big", func(tx store.Tx) error {
			hash, err := tx.PutDefinition(def)
			if err != nil {
				return err
			}
			return tx.PutInvocation(&store.InvocationRecord{JobID: "proj/big", ID: fmt.Sprintf("i%02d", i),
				Occurrence: t0.Add(time.Duration(i) * time.Minute), Status: "SUCCEEDED", DefinitionHash: hash})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	after, err := fp.StoredBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	grown := after - before
	t.Logf("%d invocations under a %d-byte definition grew the store by %d bytes", n, len(def), grown)
	if limit := int64(2 * len(def)); grown >= limit {
		t.Errorf("%d invocations under a %d-byte definition grew the store by %d bytes, want less than %d", n, len(def), grown, limit)
	}
	for _, id := range []string{"i00", fmt.Sprintf("i%02d", n-1)} {
		inv, err := s.Invocation(ctx, "proj/big", id)
		if err != nil {
			t.Fatal(err)
		}
		readDefinition(t, s, "proj/big", inv.DefinitionHash, def)
	}
}

// A Datastore transaction does not see its own mutations; a backend on it
// keeps them in its Tx, because the engine reads after it writes.
func testReadsOwnWrites(t *testing.T, s store.Store) {
	j := job("proj/a")
	inv := &store.InvocationRecord{JobID: j.ID, ID: "i1", Occurrence: t0, Status: "LAUNCHING"}
	_, err := s.Update(t.Context(), j.ID, func(tx store.Tx) error {
		if err := tx.PutJob(j); err != nil {
			return err
		}
		if err := tx.PutInvocation(inv); err != nil {
			return err
		}
		got, err := tx.Job()
		if err != nil || !sameJob(got, j) {
			t.Errorf("Tx.Job() after PutJob = %+v, %v; want %+v", got, err, j)
		}
		gotInv, err := tx.Invocation(inv.ID)
		if err != nil || !sameInvocation(gotInv, inv) {
			t.Errorf("Tx.Invocation() after PutInvocation = %+v, %v; want %+v", gotInv, err, inv)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

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
	// as bytes or as want's memo.
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

func testFnErrorWritesNothing(t *testing.T, s store.Store) {
	before := job("proj/a")
	put(t, s, before)
	tasks, err := s.Update(t.Context(), before.ID, func(tx store.Tx) error {
		after := job(before.ID)
		after.State = "RUNNING"
		after.WatchdogTimerTs = t0
		if err := tx.PutJob(after); err != nil {
			return err
		}
		if err := tx.PutInvocation(&store.InvocationRecord{JobID: before.ID, ID: "i1", Occurrence: t0, Status: "LAUNCHING"}); err != nil {
			return err
		}
		if err := tx.Enqueue(task.Task{Kind: task.StartInvocation, JobID: before.ID, Nonce: 1, ETA: t0, Invocation: "i1", Attempt: 1}); err != nil {
			return err
		}
		return fmt.Errorf("fn gives up: %w", errBoom)
	})
	if !errors.Is(err, errBoom) {
		t.Errorf("Update error = %v, want fn's error", err)
	}
	if tasks != nil {
		t.Errorf("Update returned tasks %v of a transaction that did not commit", tasks)
	}
	readJob(t, s, before.ID, before)
	if _, err := s.Invocation(t.Context(), before.ID, "i1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("invocation written by a failed fn: Invocation error = %v, want ErrNotFound", err)
	}
	if stored, ok := storedTasks(t, s); ok && len(stored) != 0 {
		t.Errorf("tasks enqueued by a failed fn were stored: %v", stored)
	}
	if ids, err := s.Overdue(t.Context(), t0.Add(time.Hour), 10); err != nil || len(ids) != 0 {
		t.Errorf("Overdue after a failed fn = %v, %v; want nothing", ids, err)
	}
}

func testReturnsEnqueued(t *testing.T, s store.Store) {
	enqueued := []task.Task{
		{Kind: task.TickLater, JobID: "proj/a", Nonce: 42, ETA: t0.Add(time.Hour)},
		{Kind: task.StartInvocation, JobID: "proj/a", Nonce: 43, ETA: t0, Invocation: "i1", Attempt: 2},
		{Kind: task.StartInvocation, JobID: "proj/a", Nonce: 44, ETA: t0.Add(time.Minute), Invocation: "i2", Attempt: 1},
	}
	got, err := s.Update(t.Context(), "proj/a", func(tx store.Tx) error {
		if err := tx.PutJob(job("proj/a")); err != nil {
			return err
		}
		for _, tk := range enqueued {
			if err := tx.Enqueue(tk); err != nil {
				return err
			}
		}
		// The same task again in one transaction is not a second task.
		return tx.Enqueue(enqueued[0])
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sameTasks(got, enqueued) {
		t.Errorf("Update returned\n%v\nwant\n%v", got, enqueued)
	}
	if stored, ok := storedTasks(t, s); ok {
		want := []task.Task{enqueued[1], enqueued[2], enqueued[0]} // by ETA
		if !sameTasks(stored, want) {
			t.Errorf("stored tasks\n%v\nwant\n%v", stored, want)
		}
	}
	// An Update that enqueues nothing returns nothing.
	got, err = s.Update(t.Context(), "proj/a", func(tx store.Tx) error { return nil })
	if err != nil || len(got) != 0 {
		t.Errorf("Update enqueuing nothing = %v, %v; want no tasks", got, err)
	}
}

func testDuplicateTaskName(t *testing.T, s store.Store) {
	first := task.Task{Kind: task.TickLater, JobID: "proj/a", Nonce: 7, ETA: t0}
	again := first
	again.ETA = t0.Add(time.Hour) // same name: Name ignores the ETA
	for _, tk := range []task.Task{first, again} {
		got, err := s.Update(t.Context(), "proj/a", func(tx store.Tx) error { return tx.Enqueue(tk) })
		if err != nil {
			t.Fatal(err)
		}
		// Posting a repeat is harmless; the backend may return it.
		if len(got) > 1 {
			t.Errorf("one Enqueue returned %d tasks: %v", len(got), got)
		}
	}
	if stored, ok := storedTasks(t, s); ok && !sameTasks(stored, []task.Task{first}) {
		t.Errorf("after enqueuing one name twice the store holds %v, want only the first %v", stored, first)
	}
}

func testOwnGroupOnly(t *testing.T, s store.Store) {
	put(t, s, job("proj/a"))
	tries := map[string]func(tx store.Tx) error{
		"PutJob": func(tx store.Tx) error { return tx.PutJob(job("proj/b")) },
		"PutInvocation": func(tx store.Tx) error {
			return tx.PutInvocation(&store.InvocationRecord{JobID: "proj/b", ID: "i1", Occurrence: t0, Status: "QUEUED"})
		},
	}
	for name, try := range tries {
		var refused error
		_, err := s.Update(t.Context(), "proj/a", func(tx store.Tx) error {
			refused = try(tx)
			// fn swallows the refusal: the Update must fail all the same,
			// or it would commit half of what fn meant.
			return nil
		})
		if refused == nil {
			t.Errorf("%s into another group was accepted", name)
		}
		if err == nil {
			t.Errorf("%s into another group: Update committed though the write was refused", name)
		}
	}
	if _, err := s.Job(t.Context(), "proj/b"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Job(proj/b) written from proj/a's transaction: error = %v, want ErrNotFound", err)
	}
	if _, err := s.Invocation(t.Context(), "proj/b", "i1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Invocation of proj/b written from proj/a's transaction: error = %v, want ErrNotFound", err)
	}
}

func testCancelled(t *testing.T, s store.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ran := false
	_, err := s.Update(ctx, "proj/a", func(tx store.Tx) error {
		ran = true
		return tx.PutJob(job("proj/a"))
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Update with a cancelled context: error = %v, want context.Canceled", err)
	}
	if ran {
		t.Error("Update with a cancelled context ran fn")
	}
	if _, err := s.Job(t.Context(), "proj/a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Job written by a cancelled Update: error = %v, want ErrNotFound", err)
	}
}

// increment adds one to the counter the job keeps in Machine, creating the
// job at 1, and retries on ErrConflict. It returns the count it wrote.
func increment(ctx context.Context, s store.Store, id string) (int, error) {
	for {
		var wrote int
		_, err := s.Update(ctx, id, incrementing(id, &wrote))
		if !errors.Is(err, store.ErrConflict) {
			return wrote, err
		}
	}
}

// incrementing is increment's transaction: it sets *wrote to the count it
// writes.
func incrementing(id string, wrote *int) func(store.Tx) error {
	return func(tx store.Tx) error {
		j, err := tx.Job()
		if errors.Is(err, store.ErrNotFound) {
			j, err = job(id), nil
		}
		if err != nil {
			return err
		}
		n := 0
		if len(j.EncodedState) > 0 {
			if n, err = strconv.Atoi(string(j.EncodedState)); err != nil {
				return err
			}
		}
		*wrote = n + 1
		j.EncodedState = []byte(strconv.Itoa(*wrote))
		if err := tx.PutJob(j); err != nil {
			return err
		}
		return tx.PutInvocation(&store.InvocationRecord{JobID: id, ID: fmt.Sprintf("inc-%05d", *wrote), Occurrence: t0.Add(time.Duration(*wrote) * time.Second), Status: "SUCCEEDED"})
	}
}

func counter(t *testing.T, s store.Store, id string) int {
	t.Helper()
	j, err := s.Job(t.Context(), id)
	if err != nil {
		t.Fatalf("Job(%s): %v", id, err)
	}
	n, err := strconv.Atoi(string(j.EncodedState))
	if err != nil {
		t.Fatalf("counter of %s: %v", id, err)
	}
	return n
}

// hammer runs perJob increments of each job, from workers goroutines per
// job, and checks that every job counts exactly its increments, each count
// written once.
func hammer(t *testing.T, s store.Store, jobs, workers, perWorker int) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]map[int]bool{}
	for j := range jobs {
		seen[fmt.Sprintf("proj/job%03d", j)] = map[int]bool{}
	}
	for id := range seen {
		for range workers {
			wg.Go(func() {
				for range perWorker {
					n, err := increment(t.Context(), s, id)
					if err != nil {
						t.Errorf("increment %s: %v", id, err)
						return
					}
					mu.Lock()
					if seen[id][n] {
						t.Errorf("two Updates of %s both wrote count %d", id, n)
					}
					seen[id][n] = true
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	for id := range seen {
		if got, want := counter(t, s, id), workers*perWorker; got != want {
			t.Errorf("%s counts %d after %d increments", id, got, want)
		}
		invs, next, err := s.Invocations(t.Context(), id, store.Page{Limit: workers*perWorker + 1})
		if err != nil || next != "" || len(invs) != workers*perWorker {
			t.Errorf("%s has %d invocations (next %q, err %v), want %d", id, len(invs), next, err, workers*perWorker)
		}
	}
}

func testConcurrentOneJob(t *testing.T, s store.Store) { hammer(t, s, 1, 32, 8) }

func testConcurrentManyJobs(t *testing.T, s store.Store) { hammer(t, s, 16, 4, 4) }

// testSubmitted: a store.Submitter given many Updates at once by one
// caller, several of one job among them, commits each of them once, as
// Update would.
func testSubmitted(t *testing.T, s store.Store) {
	sub, ok := s.(store.Submitter)
	if !ok {
		t.Skip("not a store.Submitter")
	}
	const jobs, each = 8, 4
	var waits []func() ([]task.Task, error)
	var ids []string
	for range each {
		for j := range jobs {
			id := fmt.Sprintf("proj/job%03d", j)
			ids = append(ids, id)
			waits = append(waits, sub.Submit(t.Context(), id, incrementing(id, new(int))))
		}
	}
	for i, wait := range waits {
		_, err := wait()
		if errors.Is(err, store.ErrConflict) {
			// As Update may: made again, as callers do.
			_, err = increment(t.Context(), s, ids[i])
		}
		if err != nil {
			t.Errorf("Submit %d: %v", i, err)
		}
	}
	for j := range jobs {
		id := fmt.Sprintf("proj/job%03d", j)
		if got := counter(t, s, id); got != each {
			t.Errorf("%s counts %d after %d submitted increments", id, got, each)
		}
		if invs, _, err := s.Invocations(t.Context(), id, store.Page{Limit: 2 * each}); err != nil || len(invs) != each {
			t.Errorf("%s has %d invocations (err %v), want one per increment, %d", id, len(invs), err, each)
		}
	}
}

func testOverdue(t *testing.T, s store.Store) {
	now := t0
	wd := map[string]time.Time{
		"proj/3h":    now.Add(-3 * time.Hour),
		"proj/2h":    now.Add(-2 * time.Hour),
		"proj/1us":   now.Add(-time.Microsecond),
		"proj/now":   now,
		"proj/later": now.Add(time.Microsecond),
		"proj/zero":  {},
		"other/1h":   now.Add(-time.Hour),
	}
	for id, ts := range wd {
		j := job(id)
		j.WatchdogTimerTs = ts
		put(t, s, j)
	}
	check := func(at time.Time, limit int, want ...string) {
		t.Helper()
		got, err := s.Overdue(t.Context(), at, limit)
		if err != nil {
			t.Fatalf("Overdue(%v, %d): %v", at, limit, err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("Overdue(%v, %d) = %q, want %q", at, limit, got, want)
		}
	}
	check(now, 10, "proj/3h", "proj/2h", "other/1h", "proj/1us", "proj/now")
	check(now, 2, "proj/3h", "proj/2h")
	check(now.Add(-90*time.Minute), 10, "proj/3h", "proj/2h")
	check(now.Add(-4*time.Hour), 10)

	// A job that stops waiting leaves the listing.
	j := job("proj/3h")
	put(t, s, j)
	check(now, 10, "proj/2h", "other/1h", "proj/1us", "proj/now")
}

// pageAll follows cursors from the first page and returns every item.
func pageAll[T any](t *testing.T, limit int, list func(p store.Page) ([]T, string, error), between func()) []T {
	t.Helper()
	var all []T
	p := store.Page{Limit: limit}
	for pages := 0; ; pages++ {
		items, next, err := list(p)
		if err != nil {
			t.Fatalf("page %d (limit %d): %v", pages, limit, err)
		}
		if limit > 0 && len(items) > limit {
			t.Fatalf("page %d has %d items, limit %d", pages, len(items), limit)
		}
		all = append(all, items...)
		if next == "" {
			return all
		}
		if len(items) == 0 {
			t.Fatalf("page %d is empty but has a next cursor", pages)
		}
		if pages > 1000 {
			t.Fatal("paging does not end")
		}
		if between != nil {
			between()
			between = nil
		}
		p.Cursor = next
	}
}

func testInvocationsPaging(t *testing.T, s store.Store) {
	const jobID = "proj/a"
	put(t, s, job(jobID), job("proj/b"))
	var invs []*store.InvocationRecord
	for i := range 23 {
		// Pairs of equal occurrences: ties must not cause gaps or repeats.
		invs = append(invs, &store.InvocationRecord{JobID: jobID, ID: fmt.Sprintf("inv%02d", i), Occurrence: t0.Add(time.Duration(i/2) * time.Minute), Status: "SUCCEEDED"})
	}
	putInvs(t, s, jobID, invs...)
	putInvs(t, s, "proj/b", &store.InvocationRecord{JobID: "proj/b", ID: "inv00", Occurrence: t0.Add(time.Hour), Status: "FAILED"})

	list := func(p store.Page) ([]*store.InvocationRecord, string, error) {
		return s.Invocations(t.Context(), jobID, p)
	}
	checkOrder := func(t *testing.T, got []*store.InvocationRecord) {
		t.Helper()
		seen := map[string]bool{}
		for i, inv := range got {
			if inv.JobID != jobID {
				t.Errorf("listing of %s has an invocation of %s", jobID, inv.JobID)
			}
			if seen[inv.ID] {
				t.Errorf("%s listed twice", inv.ID)
			}
			seen[inv.ID] = true
			if i > 0 && inv.Occurrence.After(got[i-1].Occurrence) {
				t.Errorf("%s (%v) listed after the older %s (%v)", inv.ID, inv.Occurrence, got[i-1].ID, got[i-1].Occurrence)
			}
		}
	}
	for _, limit := range []int{1, 4, 10, 23, 0} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			got := pageAll(t, limit, list, nil)
			checkOrder(t, got)
			if len(got) != len(invs) {
				t.Errorf("listed %d invocations, want %d", len(got), len(invs))
			}
		})
	}

	// Invocations written while paging: every earlier one is still listed
	// exactly once.
	got := pageAll(t, 5, list, func() {
		putInvs(t, s, jobID,
			&store.InvocationRecord{JobID: jobID, ID: "new-newest", Occurrence: t0.Add(time.Hour), Status: "QUEUED"},
			&store.InvocationRecord{JobID: jobID, ID: "new-middle", Occurrence: t0.Add(5 * time.Minute), Status: "QUEUED"},
			&store.InvocationRecord{JobID: jobID, ID: "new-oldest", Occurrence: t0.Add(-time.Hour), Status: "QUEUED"})
	})
	checkOrder(t, got)
	listed := map[string]bool{}
	for _, inv := range got {
		listed[inv.ID] = true
	}
	for _, inv := range invs {
		if !listed[inv.ID] {
			t.Errorf("%s was skipped by a listing during inserts", inv.ID)
		}
	}
	if !listed["new-oldest"] {
		t.Error("an invocation older than the cursor, inserted while paging, was not listed")
	}

	none, next, err := s.Invocations(t.Context(), "proj/none", store.Page{})
	if err != nil || len(none) != 0 || next != "" {
		t.Errorf("Invocations of a job without any = %v, %q, %v; want nothing", none, next, err)
	}
}

func testJobsPaging(t *testing.T, s store.Store) {
	var alpha, all []string
	for _, p := range []struct {
		project string
		n       int
	}{{"alpha", 7}, {"beta", 5}, {"alphabet", 2}} {
		for i := range p.n {
			id := fmt.Sprintf("%s/job%02d", p.project, i)
			put(t, s, job(id))
			all = append(all, id)
			if p.project == "alpha" {
				alpha = append(alpha, id)
			}
		}
	}
	slices.Sort(all)
	ids := func(jobs []*store.JobRecord) []string {
		var out []string
		for _, j := range jobs {
			out = append(out, j.ID)
		}
		return out
	}
	for _, limit := range []int{1, 3, 7, 0} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			got := pageAll(t, limit, func(p store.Page) ([]*store.JobRecord, string, error) { return s.Jobs(t.Context(), "alpha", p) }, nil)
			if !slices.Equal(ids(got), alpha) {
				t.Errorf("Jobs(alpha) = %q, want %q", ids(got), alpha)
			}
			got = pageAll(t, limit, func(p store.Page) ([]*store.JobRecord, string, error) { return s.Jobs(t.Context(), "", p) }, nil)
			if !slices.Equal(ids(got), all) {
				t.Errorf("Jobs(all) = %q, want %q", ids(got), all)
			}
		})
	}

	// A job created while paging, after the cursor, is listed; those before
	// it are listed once.
	got := pageAll(t, 3, func(p store.Page) ([]*store.JobRecord, string, error) { return s.Jobs(t.Context(), "alpha", p) },
		func() { put(t, s, job("alpha/aaa"), job("alpha/zzz")) })
	if want := append(slices.Clone(alpha), "alpha/zzz"); !slices.Equal(ids(got), want) {
		t.Errorf("Jobs(alpha) during inserts = %q, want %q", ids(got), want)
	}

	none, next, err := s.Jobs(t.Context(), "gamma", store.Page{})
	if err != nil || len(none) != 0 || next != "" {
		t.Errorf("Jobs of an empty project = %v, %q, %v; want nothing", none, next, err)
	}
}

// A cursor is opaque to callers but comes from their requests: one the
// listing did not make is the caller's error, ErrInvalidCursor, and lists
// nothing, whether it is not a cursor at all or another listing's.
func testInvalidCursor(t *testing.T, s store.Store) {
	put(t, s, job("proj/a"), job("proj/b"), job("proj/c"))
	var invs []*store.InvocationRecord
	for i := range 3 {
		invs = append(invs, &store.InvocationRecord{JobID: "proj/a", ID: fmt.Sprintf("inv%d", i), Occurrence: t0.Add(time.Duration(i) * time.Minute), Status: "SUCCEEDED"})
	}
	putInvs(t, s, "proj/a", invs...)
	_, jobsCursor, err := s.Jobs(t.Context(), "", store.Page{Limit: 1})
	if err != nil || jobsCursor == "" {
		t.Fatalf("first page of Jobs: cursor %q, error %v; want a next page", jobsCursor, err)
	}
	_, invsCursor, err := s.Invocations(t.Context(), "proj/a", store.Page{Limit: 1})
	if err != nil || invsCursor == "" {
		t.Fatalf("first page of Invocations: cursor %q, error %v; want a next page", invsCursor, err)
	}
	listings := []struct {
		name        string
		list        func(cursor string) (int, error)
		otherCursor string
	}{
		{"Jobs", func(c string) (int, error) {
			jobs, _, err := s.Jobs(t.Context(), "", store.Page{Cursor: c})
			return len(jobs), err
		}, invsCursor},
		{"Invocations", func(c string) (int, error) {
			invs, _, err := s.Invocations(t.Context(), "proj/a", store.Page{Cursor: c})
			return len(invs), err
		}, jobsCursor},
	}
	for _, l := range listings {
		for _, tc := range []struct{ name, cursor string }{
			{"not base64", "not a cursor!"},
			{"base64 of no cursor", "Z2FyYmFnZQ"},
			{"the other listing's cursor", l.otherCursor},
		} {
			t.Run(l.name+"/"+tc.name, func(t *testing.T) {
				n, err := l.list(tc.cursor)
				if !errors.Is(err, store.ErrInvalidCursor) {
					t.Errorf("%s with cursor %q: error %v, want ErrInvalidCursor", l.name, tc.cursor, err)
				}
				if n != 0 {
					t.Errorf("%s with cursor %q listed %d items, want none", l.name, tc.cursor, n)
				}
			})
		}
	}
}

func testProjects(t *testing.T, s store.Store) {
	ctx := t.Context()
	if _, err := s.Project(ctx, "billing"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Project of a store without projects: %v; want ErrNotFound", err)
	}
	if ps, err := s.Projects(ctx); err != nil || len(ps) != 0 {
		t.Fatalf("Projects of a store without projects: %v, %v; want none", ps, err)
	}
	// A job of the project changes nothing: the record is apart.
	put(t, s, job("billing/a"))
	for _, p := range []*store.ProjectRecord{
		{ID: "ops", Encoded: []byte("ops v1")},
		{ID: "billing", Encoded: []byte("billing v1")},
		{ID: "billing", Encoded: []byte("billing v2\x00")},
		{ID: "empty"},
	} {
		if err := s.PutProject(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Project(ctx, "billing")
	if err != nil || got.ID != "billing" || string(got.Encoded) != "billing v2\x00" {
		t.Errorf("Project(billing) = %+v, %v; want the second write whole", got, err)
	}
	ps, err := s.Projects(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, p := range ps {
		listed = append(listed, p.ID+"="+string(p.Encoded))
	}
	if want := []string{"billing=billing v2\x00", "empty=", "ops=ops v1"}; !slices.Equal(listed, want) {
		t.Errorf("Projects = %q; want %q", listed, want)
	}
	if err := s.PutProject(ctx, &store.ProjectRecord{}); err == nil {
		t.Error("PutProject of a record without an id succeeded")
	}
}

func testUpdateProject(t *testing.T, s store.Store) {
	ctx := t.Context()
	boom := errors.New("boom")
	if err := s.UpdateProject(ctx, "billing", func(old *store.ProjectRecord) (*store.ProjectRecord, error) {
		if old != nil {
			t.Errorf("UpdateProject of a project without a record read %+v; want nil", old)
		}
		return &store.ProjectRecord{ID: "billing", Encoded: []byte("v")}, boom
	}); !errors.Is(err, boom) {
		t.Errorf("UpdateProject whose fn failed: %v; want fn's error", err)
	}
	if err := s.UpdateProject(ctx, "billing", func(*store.ProjectRecord) (*store.ProjectRecord, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Project(ctx, "billing"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after an fn that failed and one that returned nil, Project: %v; want ErrNotFound", err)
	}
	// Each writer appends its mark to what it read: a write lost to
	// another in between would lose a mark.
	const writers = 8
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			err := s.UpdateProject(ctx, "billing", func(old *store.ProjectRecord) (*store.ProjectRecord, error) {
				var b []byte
				if old != nil {
					b = slices.Clone(old.Encoded)
				}
				return &store.ProjectRecord{ID: "billing", Encoded: append(b, byte('a'+i))}, nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, err := s.Project(ctx, "billing")
	if err != nil {
		t.Fatal(err)
	}
	marks := slices.Sorted(slices.Values(got.Encoded))
	if string(marks) != "abcdefgh" {
		t.Errorf("after %d concurrent updates the record holds %q; want every writer's mark", writers, got.Encoded)
	}
	if err := s.UpdateProject(ctx, "", func(*store.ProjectRecord) (*store.ProjectRecord, error) { return nil, nil }); err == nil {
		t.Error("UpdateProject without an id succeeded")
	}
}

func testRecent(t *testing.T, s store.Store) {
	ctx := t.Context()
	inv := func(jobID string, i int) *store.InvocationRecord {
		return &store.InvocationRecord{JobID: jobID, ID: fmt.Sprintf("inv-%03d", i), Occurrence: t0.Add(time.Duration(i) * time.Minute),
			Status: "SUCCEEDED", Message: fmt.Sprintf("run %d", i), Log: []byte("a log line"), DefinitionHash: "h"}
	}
	var many []*store.InvocationRecord
	for i := range 25 {
		many = append(many, inv("p/many", i))
	}
	put(t, s, job("p/many"), job("p/few"), job("p/none"), job("q/other"))
	putInvs(t, s, "p/many", many...)
	putInvs(t, s, "p/few", inv("p/few", 3), inv("p/few", 1))
	putInvs(t, s, "q/other", inv("q/other", 7))

	got, err := s.Recent(ctx, []string{"p/many", "p/few", "p/none", "p/missing", "p/many"}, 20)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int{"p/many": nil, "p/few": {3, 1}}
	for i := 24; i >= 5; i-- {
		want["p/many"] = append(want["p/many"], i)
	}
	if len(got) != len(want) {
		t.Errorf("Recent answered for %d jobs, want %d (p/many and p/few; not p/none, p/missing, nor q/other, which was not named)", len(got), len(want))
	}
	for jobID, idx := range want {
		if len(got[jobID]) != len(idx) {
			t.Errorf("%s: %d invocations, want %d", jobID, len(got[jobID]), len(idx))
			continue
		}
		for k, i := range idx {
			g, w := got[jobID][k], inv(jobID, i)
			if g.Log != nil || g.Definition != nil {
				t.Errorf("%s %s: Recent read the log or legacy definition; a strip shows neither", jobID, g.ID)
			}
			w.Log = nil
			if !sameInvocation(g, w) {
				t.Errorf("%s [%d] = %+v, want %+v", jobID, k, g, w)
			}
		}
	}
	if _, err := s.Recent(ctx, []string{"p/many"}, store.MaxRecent+1); err == nil {
		t.Errorf("Recent with n = %d: no error, want one (at most %d)", store.MaxRecent+1, store.MaxRecent)
	}
}
