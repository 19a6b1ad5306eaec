package sqlite

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task"
)

// TestCacheNeverAnswersForTheFile: an Update runs its function on the
// Store's cache first; whatever another Store (another process) committed
// since must still be what the function sees, whether it writes or not.
func TestCacheNeverAnswersForTheFile(t *testing.T) {
	t.Parallel()
	readCounter := func(got *int) func(store.Tx) error {
		return func(tx store.Tx) error {
			j, err := tx.Job()
			if err != nil {
				return err
			}
			*got, err = strconv.Atoi(string(j.EncodedState))
			return err
		}
	}
	readInv := func(found *bool, write bool) func(store.Tx) error {
		return func(tx store.Tx) error {
			_, err := tx.Invocation("i1")
			switch {
			case errors.Is(err, store.ErrNotFound):
				*found = false
			case err != nil:
				return err
			default:
				*found = true
			}
			if write {
				return incr(tx)
			}
			return nil
		}
	}
	putInv := func(tx store.Tx) error {
		if err := incr(tx); err != nil {
			return err
		}
		return tx.PutInvocation(&store.InvocationRecord{ID: "i1", JobID: "p/same", Status: "RUNNING", Occurrence: time.Unix(1e9, 0)})
	}
	for _, tc := range []struct {
		name  string
		write bool
	}{
		{"a function that only reads", false},
		{"a function that writes", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := tempPath(t)
			a, b := openAt(t, path, Options{}, testHooks{}), openAt(t, path, Options{}, testHooks{})
			ctx := t.Context()
			// a caches the job at 1; b moves it to 2 and adds an invocation
			// a has never seen.
			if _, err := a.Update(ctx, "p/same", incr); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Update(ctx, "p/same", putInv); err != nil {
				t.Fatal(err)
			}
			var found bool
			if _, err := a.Update(ctx, "p/same", readInv(&found, tc.write)); err != nil {
				t.Fatal(err)
			}
			if !found {
				t.Error("the Update on the stale Store did not find the invocation the other Store wrote")
			}
			want := 2
			if tc.write {
				want = 3
			}
			if _, err := b.Update(ctx, "p/same", incr); err != nil {
				t.Fatal(err)
			}
			want++
			var got int
			if _, err := a.Update(ctx, "p/same", readCounter(&got)); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("the Update on the stale Store read counter %d, want %d", got, want)
			}
		})
	}
}

// TestWritesBackWhatChanged: a row written back from the cache is updated
// without the columns it cannot change (tx.apply); what a second Store
// (the file) reads is what was put, the definitions included.
func TestWritesBackWhatChanged(t *testing.T) {
	t.Parallel()
	path := tempPath(t)
	s, file := openAt(t, path, Options{}, testHooks{}), openAt(t, path, Options{}, testHooks{})
	ctx := t.Context()
	at := time.Unix(1e9, 0)
	put := func(step, def, machine, invDef, status string) {
		t.Helper()
		_, err := s.Update(ctx, "p/j", func(tx store.Tx) error {
			j, err := tx.Job()
			if errors.Is(err, store.ErrNotFound) {
				j = &store.JobRecord{ID: "p/j", Project: "p"}
			} else if err != nil {
				return err
			}
			inv, err := tx.Invocation("i1")
			if errors.Is(err, store.ErrNotFound) {
				inv = &store.InvocationRecord{JobID: "p/j", ID: "i1", Occurrence: at}
			} else if err != nil {
				return err
			}
			j.Definition, j.EncodedState = []byte(def), []byte(machine)
			inv.Definition, inv.Status, inv.Log = []byte(invDef), status, append(inv.Log, status...)
			return errors.Join(tx.PutJob(j), tx.PutInvocation(inv))
		})
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		j, err := file.Job(ctx, "p/j")
		if err != nil {
			t.Fatal(err)
		}
		inv, err := file.Invocation(ctx, "p/j", "i1")
		if err != nil {
			t.Fatal(err)
		}
		if string(j.Definition) != def || string(j.EncodedState) != machine || string(inv.Definition) != invDef || inv.Status != status {
			t.Errorf("%s: the file holds job %q %q, invocation %q %s; want %q %q, %q %s",
				step, j.Definition, j.EncodedState, inv.Definition, inv.Status, def, machine, invDef, status)
		}
	}
	put("created", "def-1", "m1", "inv-def-1", "QUEUED")
	put("the state moves on", "def-1", "m2", "inv-def-1", "RUNNING")
	put("the definitions change", "def-2", "m3", "inv-def-2", "SUCCEEDED")
}

// TestEndedInvocationIsNeverCreatedAgain: the cache leaves ended
// invocations out and answers ErrNotFound for them; an Update that takes
// that for "new" and puts the invocation runs again on the file, sees it,
// and the ended record stands.
func TestEndedInvocationIsNeverCreatedAgain(t *testing.T) {
	t.Parallel()
	s := openAt(t, tempPath(t), Options{}, testHooks{})
	ctx := t.Context()
	at := time.Unix(1e9, 0)
	if _, err := s.Update(ctx, "p/j", func(tx store.Tx) error {
		// Read, so that the Store caches the job it creates.
		if _, err := tx.Job(); !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("a new job: %v", err)
		}
		return errors.Join(
			tx.PutJob(&store.JobRecord{ID: "p/j", Project: "p", EncodedState: []byte("1")}),
			tx.PutInvocation(&store.InvocationRecord{JobID: "p/j", ID: "i1", Occurrence: at, Status: "SUCCEEDED"}))
	}); err != nil {
		t.Fatal(err)
	}
	var runs, sawIt int
	_, err := s.Update(ctx, "p/j", func(tx store.Tx) error {
		runs++
		j, err := tx.Job()
		if err != nil {
			return err
		}
		switch _, err := tx.Invocation("i1"); {
		case err == nil:
			sawIt++
			return errors.New("i1 is recorded already; not queuing it again")
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		j.EncodedState = []byte("2")
		return errors.Join(tx.PutJob(j), tx.PutInvocation(&store.InvocationRecord{JobID: "p/j", ID: "i1", Occurrence: at, Status: "QUEUED"}))
	})
	if err == nil || sawIt == 0 || runs < 2 {
		t.Errorf("Update = %v after %d runs, %d of them seeing i1; want a first run on the cache, then the function's refusal after it saw i1", err, runs, sawIt)
	}
	inv, err := s.Invocation(ctx, "p/j", "i1")
	if err != nil || inv.Status != "SUCCEEDED" {
		t.Errorf("i1 = %+v, %v; want it SUCCEEDED as it was", inv, err)
	}
	if j, err := s.Job(ctx, "p/j"); err != nil || string(j.EncodedState) != "1" {
		t.Errorf("the job's state is %q, %v; want it unchanged", j.EncodedState, err)
	}
}

// TestNewJobsAreDefinedOffTheCommitter: a job the cache does not hold
// (a new one, or one not written since Open) runs its function on the
// caller, against what a reader finds, while the committer is busy with
// another write; the committer then only checks and writes, all of them
// in one batch.
func TestNewJobsAreDefinedOffTheCommitter(t *testing.T) {
	t.Parallel()
	b, hooks := newBatcher()
	s := openAt(t, tempPath(t), Options{}, hooks)
	held := b.hold(t, s)
	const n = 8
	var holding atomic.Bool
	holding.Store(true)
	var whileHeld atomic.Int32
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			id := fmt.Sprintf("p/new%d", i)
			_, errs[i] = s.Update(t.Context(), id, func(tx store.Tx) error {
				if holding.Load() {
					whileHeld.Add(1)
				}
				if _, err := tx.Job(); !errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("Job of a new job: %v, want ErrNotFound", err)
				}
				return tx.PutJob(&store.JobRecord{ID: id, Project: "p", State: "SCHEDULED"})
			})
		})
	}
	b.waitQueued(n)
	holding.Store(false)
	close(b.release)
	wg.Wait()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("Update %d: %v", i, err)
		}
		if _, err := s.Job(t.Context(), fmt.Sprintf("p/new%d", i)); err != nil {
			t.Errorf("job %d: %v", i, err)
		}
	}
	if got := whileHeld.Load(); got != n {
		t.Errorf("%d of %d functions ran while the committer was busy, want all: they ran on the committer", got, n)
	}
	if st := s.Stats(); st.Commits != 2 {
		t.Errorf("Stats = %+v, want 2 commits (the holder, then the %d new jobs together)", st, n)
	}
}

// TestNewJobDefinedElsewhereMeanwhile: a job found absent is inserted only
// if it still is; if another process defined it meanwhile, the function
// runs again on the committer and sees that job.
func TestNewJobDefinedElsewhereMeanwhile(t *testing.T) {
	t.Parallel()
	path := tempPath(t)
	a, b := openAt(t, path, Options{}, testHooks{}), openAt(t, path, Options{}, testHooks{})
	runs := 0
	_, err := a.Update(t.Context(), "p/same", func(tx store.Tx) error {
		runs++
		if runs == 1 {
			if _, err := b.Update(t.Context(), "p/same", incr); err != nil {
				return err
			}
		}
		return incr(tx)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := count(t, a, "p/same"); got != 2 || runs != 2 {
		t.Errorf("counter %d after %d runs, want 2 after 2: the other process's definition was overwritten", got, runs)
	}
}

// TestANewJobIsAHintNotTrusted: an Update marked store.NewJob runs its
// function on the job's absence without reading it; on a job that exists
// after all (here, defined by another process), the insert is refused, or
// for a function that writes nothing the reader's check fails, and the
// function runs again on the job as it is.
func TestANewJobIsAHintNotTrusted(t *testing.T) {
	t.Parallel()
	path := tempPath(t)
	a, b := openAt(t, path, Options{}, testHooks{}), openAt(t, path, Options{}, testHooks{})
	if _, err := a.Update(t.Context(), "p/same", incr); err != nil {
		t.Fatal(err)
	}
	var found []bool
	_, err := b.Update(store.NewJob(t.Context()), "p/same", func(tx store.Tx) error {
		_, err := tx.Job()
		found = append(found, err == nil)
		return incr(tx)
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{false, true}; !slices.Equal(found, want) {
		t.Errorf("the function found the job %v, want %v: assumed absent unread, then found on the committer", found, want)
	}
	if got := count(t, b, "p/same"); got != 2 {
		t.Errorf("counter %d, want 2: the other process's job was overwritten", got)
	}
	// A function that writes nothing is checked on a reader instead.
	c := openAt(t, path, Options{}, testHooks{})
	found = nil
	if _, err := c.Update(store.NewJob(t.Context()), "p/same", func(tx store.Tx) error {
		_, err := tx.Job()
		found = append(found, err == nil)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []bool{false, true}; !slices.Equal(found, want) {
		t.Errorf("a function writing nothing found the job %v, want %v", found, want)
	}
}

// TestAReadNeverTakesTheCacheBack: a job read on a reader (for an Update,
// or listed) is cached only
// if the committer has not cached a later version meanwhile, so the
// cache's guess never goes back to what the file no longer holds.
func TestAReadNeverTakesTheCacheBack(t *testing.T) {
	t.Parallel()
	s := openAt(t, tempPath(t), Options{}, testHooks{})
	for range 2 {
		if _, err := s.Update(t.Context(), "p/same", incr); err != nil {
			t.Fatal(err)
		}
	}
	later := s.cache.get("p/same")
	s.cache.putIfNewer("p/same", &cachedGroup{version: later.version - 1, job: &store.JobRecord{ID: "p/same", Project: "p"}})
	if got := s.cache.get("p/same"); got != later {
		t.Errorf("cached version %d replaced by an older read's %d", later.version, got.version)
	}
	s.cache.drop("p/same", nil)
	read, err := s.load(t.Context(), "p/same")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.cache.get("p/same"); got != read || read.version != later.version {
		t.Errorf("a job read on a reader was not cached at its version %d", later.version)
	}
	s.cache.drop("p/same", nil)
	if _, _, err := s.Jobs(t.Context(), "p", store.Page{}); err != nil {
		t.Fatal(err)
	}
	if got := s.cache.get("p/same"); got == nil || got.version != later.version {
		t.Errorf("a job listed was not cached at its version %d", later.version)
	}
}

// TestAFailureOnTheCacheIsCheckedNotRunAgain: a function that fails on the
// cache, or writes nothing, is answered as it is if the job is still at
// the version it read, without the committer running it again; if another
// process moved the job on, it runs again on the committer and sees that.
func TestAFailureOnTheCacheIsCheckedNotRunAgain(t *testing.T) {
	t.Parallel()
	path := tempPath(t)
	a, b := openAt(t, path, Options{}, testHooks{}), openAt(t, path, Options{}, testHooks{})
	if _, err := a.Update(t.Context(), "p/same", incr); err != nil {
		t.Fatal(err)
	}
	// Fails while the counter is 1.
	runs := 0
	failAtOne := func(tx store.Tx) error {
		runs++
		j, err := tx.Job()
		if err != nil {
			return err
		}
		if string(j.EncodedState) == "1" {
			return errBoom
		}
		return nil
	}
	if _, err := a.Update(t.Context(), "p/same", failAtOne); !errors.Is(err, errBoom) || runs != 1 {
		t.Errorf("current cache: error %v after %d runs, want errBoom after 1", err, runs)
	}
	if st := a.Stats(); st.Commits != 1 {
		t.Errorf("Stats = %+v: the failed function reached the committer", st)
	}
	if _, err := b.Update(t.Context(), "p/same", incr); err != nil {
		t.Fatal(err)
	}
	runs = 0
	if _, err := a.Update(t.Context(), "p/same", failAtOne); err != nil || runs != 2 {
		t.Errorf("stale cache: error %v after %d runs, want success on the committer's run", err, runs)
	}
}

// TestSubmitKeepsManyUpdatesInFlight: one goroutine submits Updates of
// several new jobs while the committer is busy; each is queued before
// the next is submitted, none waits for a commit, and once the committer
// is free they all commit together. A job submitted again in between,
// its first write still queued, has its function run again on the
// committer, where it sees that write.
func TestSubmitKeepsManyUpdatesInFlight(t *testing.T) {
	t.Parallel()
	b, hooks := newBatcher()
	s := openAt(t, tempPath(t), Options{}, hooks)
	held := b.hold(t, s)
	const n = 8
	var sawFirst bool
	submitted := make(chan []func() ([]task.Task, error), 1)
	go func() {
		var waits []func() ([]task.Task, error)
		for i := range n {
			id := fmt.Sprintf("p/new%d", i)
			waits = append(waits, s.Submit(store.NewJob(t.Context()), id, func(tx store.Tx) error {
				return tx.PutJob(&store.JobRecord{ID: id, Project: "p", State: "SCHEDULED"})
			}))
			b.waitQueued(1)
		}
		submitted <- append(waits, s.Submit(store.NewJob(t.Context()), "p/new0", func(tx store.Tx) error {
			j, err := tx.Job()
			if errors.Is(err, store.ErrNotFound) {
				return tx.PutJob(&store.JobRecord{ID: "p/new0", Project: "p", State: "SCHEDULED"})
			}
			if err != nil {
				return err
			}
			sawFirst = true
			j.State = "PAUSED"
			return tx.PutJob(j)
		}))
	}()
	var waits []func() ([]task.Task, error)
	select {
	case waits = <-submitted:
	case <-time.After(time.Minute):
		close(b.release)
		t.Fatal("Submit waited for the commit, which the held committer cannot make")
	}
	close(b.release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	for i, wait := range waits {
		if _, err := wait(); err != nil {
			t.Errorf("Submit %d: %v", i, err)
		}
	}
	if !sawFirst {
		t.Error("the second Submit of p/new0 never saw the first one's write")
	}
	if j, err := s.Job(t.Context(), "p/new0"); err != nil || j.State != "PAUSED" {
		t.Errorf("p/new0 = %+v, %v; want PAUSED, written by the second Submit", j, err)
	}
	if st := s.Stats(); st.Commits > 3 {
		t.Errorf("Stats = %+v, want at most 3 commits (the holder, the %d new jobs together, the one run again)", st, n)
	}
}
