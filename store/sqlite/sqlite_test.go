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
		j, err = &store.Job{ID: "p/same", Project: "p", State: "SCHEDULED"}, nil
	}
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(string(j.Machine))
	j.Machine = []byte(strconv.Itoa(n + 1))
	return tx.PutJob(j)
}

func count(t *testing.T, s *Store, id string) int {
	t.Helper()
	j, err := s.Job(t.Context(), id)
	if err != nil {
		t.Fatalf("Job(%s): %v", id, err)
	}
	n, err := strconv.Atoi(string(j.Machine))
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

// hold runs an Update that occupies the committer until release is
// closed; it returns once the committer is inside it.
func (b *batcher) hold(t *testing.T, s *Store) <-chan error {
	inside := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := s.Update(context.Background(), "p/holder", func(tx store.Tx) error {
			close(inside)
			<-b.release
			return tx.PutJob(&store.Job{ID: "p/holder", Project: "p"})
		})
		done <- err
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
// after writing, as one batch. It returns each Update's error and how many
// times each fn ran.
func runBatch(t *testing.T, s *Store, b *batcher, n, failing int) ([]error, []int32) {
	held := b.hold(t, s)
	errs := make([]error, n)
	runs := make([]int32, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = s.Update(t.Context(), "p/same", func(tx store.Tx) error {
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
	if st := s.Stats(); st.Commits != 2 || st.Updates != n {
		t.Errorf("Stats = %+v, want 2 commits (the holder, the batch) and %d updates", st, n)
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
	if st := s.Stats(); st.Commits != n || st.Updates != n {
		t.Errorf("Stats = %+v, want %d commits (the holder, then %d alone) and %d updates", st, n, n-1, n)
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
		_, err := s.Update(ctx, "p/same", func(tx store.Tx) error { ran.Store(true); return incr(tx) })
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
	}{{SyncFull, 2}, {SyncNormal, 1}, {SyncOff, 0}} {
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

func TestTaskRows(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openAt(t, tempPath(t), Options{}, testHooks{})
	t0 := time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)
	tk := func(nonce int64, eta time.Time) task.Task {
		return task.Task{Kind: task.TickLater, JobID: "p/j", Nonce: nonce, ETA: eta}
	}
	a, bt, c := tk(1, t0), tk(2, t0.Add(time.Minute)), tk(3, t0.Add(time.Hour))
	if _, err := s.Update(ctx, "p/j", func(tx store.Tx) error {
		return errors.Join(tx.Enqueue(a), tx.Enqueue(bt), tx.Enqueue(c))
	}); err != nil {
		t.Fatal(err)
	}
	claim := func(owner string, now time.Time) []string {
		t.Helper()
		got, next, ok, err := s.ClaimTasks(ctx, Claim{Owner: owner, Now: now, Max: 10, Lease: 10 * time.Minute, OrphanAfter: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		// Fewer than Max due: the claim says what NextDue says after it.
		if want, wantOK, err := s.NextDue(ctx, 30*time.Second); len(got) < 10 && (err != nil || ok != wantOK || !next.Equal(want)) {
			t.Errorf("ClaimTasks at %v: next due %v (%v); NextDue after it says %v (%v, %v)", now, next, ok, want, wantOK, err)
		}
		var names []string
		for _, c := range got {
			names = append(names, fmt.Sprintf("%s#%d", c.Name(), c.Failures))
		}
		return names
	}
	nextDue := func(want time.Time) {
		t.Helper()
		got, ok, err := s.NextDue(ctx, 30*time.Second)
		if err != nil || !ok || !got.Equal(want) {
			t.Errorf("NextDue = %v, %v, %v; want %v", got, ok, err, want)
		}
	}
	eq := func(step string, got []string, want ...string) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: claimed %q, want %q", step, got, want)
		}
	}

	nextDue(t0)
	eq("A claims what is due", claim("A", t0.Add(time.Minute)), "p/j/tick/1#0", "p/j/tick/2#0")
	eq("B finds them held", claim("B", t0.Add(time.Minute)))
	// A's claims become free when A's heartbeat is OrphanAfter old.
	nextDue(t0.Add(time.Minute + 30*time.Second))
	eq("B takes over A's orphans", claim("B", t0.Add(time.Minute+30*time.Second)), "p/j/tick/1#0", "p/j/tick/2#0")

	// A, back, can no longer hand back what B holds.
	if err := s.AckTasks(ctx, "A", nil, []Retry{{Name: a.Name(), ETA: t0.Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AckTasks(ctx, "B", []string{a.Name()}, []Retry{{Name: bt.Name(), ETA: t0.Add(5 * time.Minute)}}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CountTasks(ctx); err != nil || n != 2 {
		t.Errorf("CountTasks = %d, %v; want 2", n, err)
	}
	nextDue(t0.Add(5 * time.Minute))
	eq("a retry waits for its ETA", claim("B", t0.Add(4*time.Minute)))
	eq("a retry counts its failure", claim("B", t0.Add(5*time.Minute)), "p/j/tick/2#1")

	// While B heartbeats, its claim holds until the lease ends.
	if err := s.Heartbeat(ctx, "B", t0.Add(15*time.Minute), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	eq("the lease holds a live owner's claim", claim("A", t0.Add(15*time.Minute-time.Nanosecond)))
	eq("an expired lease frees it", claim("A", t0.Add(15*time.Minute)), "p/j/tick/2#1")

	if err := s.DeleteTask(ctx, c.Name()); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CountTasks(ctx); err != nil || n != 1 {
		t.Errorf("CountTasks after DeleteTask = %d, %v; want 1", n, err)
	}
	if err := s.PurgeTasks(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.NextDue(ctx, 30*time.Second); err != nil || ok {
		t.Errorf("NextDue on an empty queue = %v, %v; want none", ok, err)
	}
}

func TestClaimTasksAcknowledgesInItsTransaction(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openAt(t, tempPath(t), Options{}, testHooks{})
	t0 := time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)
	a := task.Task{Kind: task.TickLater, JobID: "p/j", Nonce: 1, ETA: t0}
	b := task.Task{Kind: task.TickLater, JobID: "p/j", Nonce: 2, ETA: t0}
	if _, err := s.Update(ctx, "p/j", func(tx store.Tx) error { return errors.Join(tx.Enqueue(a), tx.Enqueue(b)) }); err != nil {
		t.Fatal(err)
	}
	claim := Claim{Owner: "A", Now: t0, Max: 10, Lease: 10 * time.Minute, OrphanAfter: 30 * time.Second}
	if got, _, _, err := s.ClaimTasks(ctx, claim); err != nil || len(got) != 2 {
		t.Fatalf("first claim = %v, %v; want both tasks", got, err)
	}
	claim.Done, claim.Retry = []string{a.Name()}, []Retry{{Name: b.Name(), ETA: t0.Add(time.Minute)}}
	if got, _, _, err := s.ClaimTasks(ctx, claim); err != nil || len(got) != 0 {
		t.Fatalf("claim that acknowledges both = %v, %v; want nothing due", got, err)
	}
	tasks, err := s.Tasks(ctx, 10)
	if err != nil || len(tasks) != 1 || tasks[0].Name() != b.Name() || !tasks[0].ETA.Equal(t0.Add(time.Minute)) {
		t.Errorf("after the claim: tasks %v, %v; want only %s, due a minute later", tasks, err, b.Name())
	}

	// An owner that claims nothing has no heartbeat written.
	if got, _, _, err := s.ClaimTasks(ctx, Claim{Owner: "idle", Now: t0, Max: 10, Lease: time.Minute, OrphanAfter: time.Minute}); err != nil || len(got) != 0 {
		t.Fatalf("claim with nothing due = %v, %v", got, err)
	}
	var n int
	if err := s.read.QueryRowContext(ctx, "SELECT count(*) FROM owners WHERE owner = 'idle'").Scan(&n); err != nil || n != 0 {
		t.Errorf("owner rows of an owner that claimed nothing: %d, %v; want 0", n, err)
	}
}

func TestAdoptedTasksAreWrittenClaimed(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	var failCommit atomic.Bool
	s := openAt(t, tempPath(t), Options{}, testHooks{commit: func() error {
		if failCommit.Load() {
			return errBoom
		}
		return nil
	}})
	t0 := time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)
	tk := func(nonce int64, eta time.Time) task.Task {
		return task.Task{Kind: task.TickLater, JobID: "p/j", Nonce: nonce, ETA: eta}
	}
	var adopted []string
	s.Adopt(&Adoption{Owner: "A", Lease: 10 * time.Minute, Now: func() time.Time { return t0 },
		Adopted: func(tasks []task.Task) {
			for _, t := range tasks {
				adopted = append(adopted, t.Name())
			}
		}})
	enqueue := func(tasks ...task.Task) error {
		_, err := s.Update(ctx, "p/j", func(tx store.Tx) error {
			for _, t := range tasks {
				if err := tx.Enqueue(t); err != nil {
					return err
				}
			}
			return nil
		})
		return err
	}
	claim := func(c Claim) []string {
		t.Helper()
		c.Lease, c.OrphanAfter = 10*time.Minute, 30*time.Second
		got, _, _, err := s.ClaimTasks(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range got {
			names = append(names, c.Name())
		}
		return names
	}

	// Already due: adopted; due later: left to be claimed.
	due, later := tk(1, t0), tk(2, t0.Add(time.Second))
	if err := enqueue(due, later); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(adopted) != fmt.Sprint([]string{due.Name()}) {
		t.Errorf("adopted %q, want only the due %s", adopted, due.Name())
	}
	if got := claim(Claim{Owner: "B", Now: t0.Add(time.Second), Max: 10}); fmt.Sprint(got) != fmt.Sprint([]string{later.Name()}) {
		t.Errorf("B claimed %q; want only %s: the adopted task is A's", got, later.Name())
	}

	// A repeat of a queued task is not a new task, and not adopted.
	adopted = nil
	if err := enqueue(tk(2, t0)); err != nil || len(adopted) != 0 {
		t.Errorf("re-enqueue of a queued task: %v, adopted %q; want nothing adopted", err, adopted)
	}
	// Nor is a task whose transaction did not commit.
	failCommit.Store(true)
	if err := enqueue(tk(3, t0)); !errors.Is(err, errBoom) || len(adopted) != 0 {
		t.Errorf("failed commit: %v, adopted %q; want %v and nothing adopted", err, adopted, errBoom)
	}
	failCommit.Store(false)

	// Handed back, it is free at once, its failures unchanged.
	if got := claim(Claim{Owner: "A", Now: t0, Release: []string{due.Name()}}); len(got) != 0 {
		t.Errorf("a claim of nothing that releases: claimed %q", got)
	}
	got, _, _, err := s.ClaimTasks(ctx, Claim{Owner: "B", Now: t0, Max: 10, Lease: time.Minute, OrphanAfter: time.Minute})
	if err != nil || len(got) != 1 || got[0].Name() != due.Name() || got[0].Failures != 0 {
		t.Errorf("B's claim after the release = %v, %v; want %s with no failures", got, err, due.Name())
	}

	s.Adopt(nil)
	adopted = nil
	if err := enqueue(tk(4, t0)); err != nil || len(adopted) != 0 {
		t.Errorf("without adoption: %v, adopted %q", err, adopted)
	}
}
