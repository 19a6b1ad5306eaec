package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/store/storetest"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/taskrows"
)

func tempPath(t testing.TB) string { return filepath.Join(t.TempDir(), "sundial.db") }

func openAt(t testing.TB, path string, opts Options, hooks testHooks) *Store {
	t.Helper()
	s, err := open(path, opts, hooks)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		return openAt(t, tempPath(t), Options{}, testHooks{})
	})
}

var errBoom = errors.New("boom")

// incr adds one to the counter kept in the job's Machine.
func incr(tx store.Tx) error {
	j, err := tx.Job()
	if errors.Is(err, store.ErrNotFound) {
		j, err = &store.JobRecord{ID: "p/same", Project: "p", State: "SCHEDULED"}, nil
	}
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(string(j.EncodedState))
	j.EncodedState = []byte(strconv.Itoa(n + 1))
	return tx.PutJob(j)
}

func count(t *testing.T, s *Store, id string) int {
	t.Helper()
	j, err := s.Job(t.Context(), id)
	if err != nil {
		t.Fatalf("Job(%s): %v", id, err)
	}
	n, err := strconv.Atoi(string(j.EncodedState))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// batcher makes the committer form one known batch: hold blocks the
// committer inside an Update, the test queues its Updates, and release
// lets them all go as the next batch.
type batcher struct {
	queued  chan struct{}
	release chan struct{}
}

func newBatcher() (*batcher, testHooks) {
	b := &batcher{queued: make(chan struct{}, 1000), release: make(chan struct{})}
	return b, testHooks{queued: func() { b.queued <- struct{}{} }}
}

// hold runs a write that occupies the committer until release is closed;
// it returns once the committer is inside it.
func (b *batcher) hold(t *testing.T, s *Store) <-chan error {
	inside := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.write(context.Background(), false, nil, func(w *writer) error {
			close(inside)
			<-b.release
			_, err := w.exec("INSERT INTO jobs (id, project, state) VALUES ('p/holder', 'p', 'SCHEDULED')")
			return err
		})
	}()
	<-b.queued
	<-inside
	return done
}

// waitQueued waits until n more Updates are queued behind the holder.
func (b *batcher) waitQueued(n int) {
	for range n {
		<-b.queued
	}
}

// runBatch queues n Updates of one job, the failing-th of which fails
// after writing, as one batch. They run on the committer, as Updates the
// cache cannot answer do, so that each sees the writes before it. It
// returns each Update's error and how many times each fn ran.
func runBatch(t *testing.T, s *Store, b *batcher, n, failing int) ([]error, []int32) {
	held := b.hold(t, s)
	errs := make([]error, n)
	runs := make([]int32, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = s.updateOnCommitter(t.Context(), "p/same", func(tx store.Tx) error {
				atomic.AddInt32(&runs[i], 1)
				if err := incr(tx); err != nil {
					return err
				}
				if i == failing {
					return errBoom
				}
				return nil
			})
		})
	}
	b.waitQueued(n)
	close(b.release)
	wg.Wait()
	if err := <-held; err != nil {
		t.Fatalf("holding Update: %v", err)
	}
	return errs, runs
}

func TestBatchCommitsAllButTheFailedFn(t *testing.T) {
	t.Parallel()
	b, hooks := newBatcher()
	s := openAt(t, tempPath(t), Options{}, hooks)
	const n, failing = 10, 3
	errs, runs := runBatch(t, s, b, n, failing)
	for i, err := range errs {
		if i == failing && !errors.Is(err, errBoom) {
			t.Errorf("failing Update %d: error %v, want errBoom", i, err)
		}
		if i != failing && err != nil {
			t.Errorf("Update %d: %v", i, err)
		}
		if runs[i] != 1 {
			t.Errorf("fn %d ran %d times", i, runs[i])
		}
	}
	// Each Update saw the increments before it, and the failed one's was
	// never written.
	if got := count(t, s, "p/same"); got != n-1 {
		t.Errorf("counter = %d, want %d", got, n-1)
	}
	if st := s.Stats(); st.Commits != 2 || st.Updates != n-1 {
		t.Errorf("Stats = %+v, want 2 commits (the holder, the batch) and %d updates", st, n-1)
	}
}

func TestFailedBatchCommitRetriesOneByOne(t *testing.T) {
	t.Parallel()
	b, hooks := newBatcher()
	var commits atomic.Int32
	hooks.commit = func() error {
		// The holder commits alone; the batch's COMMIT is the second.
		if commits.Add(1) == 2 {
			return errors.New("injected COMMIT failure")
		}
		return nil
	}
	s := openAt(t, tempPath(t), Options{}, hooks)
	const n, failing = 8, 5
	errs, runs := runBatch(t, s, b, n, failing)
	for i, err := range errs {
		switch {
		case i == failing:
			if !errors.Is(err, errBoom) || runs[i] != 1 {
				t.Errorf("failing Update: error %v after %d runs, want errBoom after 1", err, runs[i])
			}
		case err != nil || runs[i] != 2:
			t.Errorf("Update %d: error %v after %d runs, want success on its own retry", i, err, runs[i])
		}
	}
	if got := count(t, s, "p/same"); got != n-1 {
		t.Errorf("counter = %d, want %d", got, n-1)
	}
	if st := s.Stats(); st.Commits != n || st.Updates != n-1 {
		t.Errorf("Stats = %+v, want %d commits (the holder, then %d alone) and %d updates", st, n, n-1, n-1)
	}
}

func TestQueuedUpdateWithdrawnOnCancel(t *testing.T) {
	t.Parallel()
	b, hooks := newBatcher()
	s := openAt(t, tempPath(t), Options{}, hooks)
	held := b.hold(t, s)
	ctx, cancel := context.WithCancel(t.Context())
	var ran atomic.Bool
	done := make(chan error)
	go func() {
		_, err := s.updateOnCommitter(ctx, "p/same", func(tx store.Tx) error { ran.Store(true); return incr(tx) })
		done <- err
	}()
	b.waitQueued(1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("withdrawn Update: error %v, want context.Canceled", err)
	}
	close(b.release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(t.Context(), "p/other", func(store.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if ran.Load() {
		t.Error("the withdrawn Update's fn ran")
	}
	if _, err := s.Job(t.Context(), "p/same"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the withdrawn Update wrote: Job error %v", err)
	}
}

func TestTwoStoresOnOneFile(t *testing.T) {
	t.Parallel()
	path := tempPath(t)
	// Two Stores on one file stand for two processes: each has its own
	// committer, and only SQLite's lock serialises them.
	stores := []*Store{openAt(t, path, Options{}, testHooks{}), openAt(t, path, Options{}, testHooks{})}
	const perStore, each = 8, 16
	var wg sync.WaitGroup
	for _, s := range stores {
		for range perStore {
			wg.Go(func() {
				for range each {
					if _, err := s.Update(t.Context(), "p/same", incr); err != nil {
						t.Errorf("Update: %v", err)
					}
				}
			})
		}
	}
	wg.Wait()
	for i, s := range stores {
		if got, want := count(t, s, "p/same"), 2*perStore*each; got != want {
			t.Errorf("store %d reads counter %d, want %d", i, got, want)
		}
	}
}

func TestDurabilitySettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sync Sync
		want int
	}{{SyncFull, 2}, {SyncNormal, 1}} {
		path := tempPath(t)
		s := openAt(t, path, Options{Synchronous: tc.sync, BusyTimeout: 1234 * time.Millisecond}, testHooks{})
		var syncMode, busy, version int
		var journal string
		err := s.write(t.Context(), false, nil, func(w *writer) error {
			for q, dst := range map[string]any{
				"PRAGMA synchronous": &syncMode, "PRAGMA journal_mode": &journal,
				"PRAGMA busy_timeout": &busy, "PRAGMA user_version": &version,
			} {
				if err := w.queryRow(q).Scan(dst); err != nil {
					return fmt.Errorf("%s: %w", q, err)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if syncMode != tc.want || journal != "wal" || busy != 1234 || version != len(migrations) {
			t.Errorf("Sync %d: synchronous=%d journal_mode=%s busy_timeout=%d user_version=%d; want %d, wal, 1234, %d",
				tc.sync, syncMode, journal, busy, version, tc.want, len(migrations))
		}

		// Opening the file again keeps its schema and its rows.
		if _, err := s.Update(t.Context(), "p/same", incr); err != nil {
			t.Fatal(err)
		}
		again := openAt(t, path, Options{Synchronous: tc.sync}, testHooks{})
		if got := count(t, again, "p/same"); got != 1 {
			t.Errorf("reopened file: counter %d, want 1", got)
		}
	}
}

func TestPanicInFnReachesTheCaller(t *testing.T) {
	t.Parallel()
	s := openAt(t, tempPath(t), Options{}, testHooks{})
	func() {
		defer func() {
			if p := recover(); p != "fn broke" {
				t.Errorf("recovered %v, want fn's panic", p)
			}
		}()
		_, _ = s.Update(t.Context(), "p/same", func(tx store.Tx) error {
			_ = incr(tx)
			panic("fn broke")
		})
	}()
	if _, err := s.Update(t.Context(), "p/same", incr); err != nil {
		t.Fatalf("Update after a panic: %v", err)
	}
	if got := count(t, s, "p/same"); got != 1 {
		t.Errorf("counter %d, want 1: the panicking fn's write must be undone", got)
	}
}

func TestClosed(t *testing.T) {
	t.Parallel()
	s, err := Open(tempPath(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(t.Context(), "p/same", incr); !errors.Is(err, ErrClosed) {
		t.Errorf("Update after Close: %v, want ErrClosed", err)
	}
}

// The task rows' contract (claims, leases, owners, adoption) is checked by
// task/taskrows/rowstest, run from rows_test.go. What follows is this
// store's own: what it writes and does not. The faults that lose tasks
// are sqlitetest's.

// A claim that finds nothing writes no heartbeat for its owner: a stepping
// dispatcher ends every step with one.
func TestIdleClaimWritesNoHeartbeat(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openAt(t, tempPath(t), Options{}, testHooks{})
	t0 := time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)
	if got, _, _, err := s.ClaimTasks(ctx, taskrows.Claim{Owner: "idle", Now: t0, Max: 10, Lease: time.Minute, OrphanAfter: time.Minute}); err != nil || len(got) != 0 {
		t.Fatalf("claim with nothing due = %v, %v", got, err)
	}
	var n int
	if err := s.read.QueryRowContext(ctx, "SELECT count(*) FROM owners WHERE owner = 'idle'").Scan(&n); err != nil || n != 0 {
		t.Errorf("owner rows of an owner that claimed nothing: %d, %v; want 0", n, err)
	}
}

// A task whose transaction did not commit is not adopted.
func TestFailedCommitAdoptsNothing(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openAt(t, tempPath(t), Options{}, testHooks{commit: func() error { return errBoom }})
	t0 := time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)
	var adopted []task.Task
	s.Adopt(&taskrows.Adoption{Owner: "A", Lease: 10 * time.Minute, Now: func() time.Time { return t0 },
		Adopted: func(tasks []task.Task) { adopted = append(adopted, tasks...) }})
	_, err := s.Update(ctx, "p/j", func(tx store.Tx) error {
		return tx.Enqueue(task.Task{Kind: task.TickLater, JobID: "p/j", Nonce: 1, ETA: t0})
	})
	if !errors.Is(err, errBoom) || len(adopted) != 0 {
		t.Errorf("failed commit: %v, adopted %v; want %v and nothing adopted", err, adopted, errBoom)
	}
}

// StoredBytes is the file's size as SQLite counts it, the pages still in
// the WAL included (storetest.Footprint).
func (s *Store) StoredBytes(ctx context.Context) (int64, error) {
	var n int64
	err := s.read.QueryRowContext(ctx, "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()").Scan(&n)
	return n, err
}
