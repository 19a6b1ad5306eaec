package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/store/sqlite/sqlitetest"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/taskrows"
)

var t0 = time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func openStore(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(path, sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func tempStore(t *testing.T) *sqlite.Store {
	return openStore(t, filepath.Join(t.TempDir(), "sundial.db"))
}

func tick(nonce int64, eta time.Time) task.Task {
	return task.Task{Kind: task.TickLater, JobID: "p/j", Nonce: nonce, ETA: eta}
}

// enqueue commits tasks in one Update and returns what it enqueued.
func enqueue(t *testing.T, s *sqlite.Store, tasks ...task.Task) []task.Task {
	t.Helper()
	got, err := s.Update(t.Context(), "p/j", func(tx store.Tx) error {
		for _, tk := range tasks {
			if err := tx.Enqueue(tk); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// fakeClock fails the test if a dispatcher stepped by RunDue reads it:
// RunDue's now is the only time it may use.
func fakeClock(t *testing.T) func() time.Time {
	return func() time.Time {
		t.Error("RunDue read the clock")
		return t0
	}
}

type step struct {
	at          time.Time
	wantHandled int
	wantNext    time.Time // zero: no task left
}

func runSteps(t *testing.T, d *Dispatcher, steps []step) {
	t.Helper()
	for _, s := range steps {
		handled, next, ok, err := d.RunDue(t.Context(), s.at)
		if err != nil {
			t.Fatalf("RunDue(%v): %v", s.at, err)
		}
		if handled != s.wantHandled || ok != !s.wantNext.IsZero() || !next.Equal(s.wantNext) {
			t.Errorf("RunDue(t0+%v) = %d handled, next t0+%v (ok %v); want %d, next t0+%v",
				s.at.Sub(t0), handled, next.Sub(t0), ok, s.wantHandled, s.wantNext.Sub(t0))
		}
	}
}

func TestRunDueTakesOverAnOrphanedClaim(t *testing.T) {
	t.Parallel()
	s := tempStore(t)
	enqueue(t, s, tick(1, t0))
	// A process claims the task with a long lease and dies: it never
	// heartbeats again.
	claimed, _, _, err := s.ClaimTasks(t.Context(), taskrows.Claim{Owner: "crashed", Now: t0, Max: 1, Lease: time.Hour, OrphanAfter: 30 * time.Second})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("crashed owner's claim = %v, %v", claimed, err)
	}
	d := New(s, func(context.Context, task.Task) error { return nil }, Options{Now: fakeClock(t), OrphanAfter: 30 * time.Second, Logger: quiet})
	runSteps(t, d, []step{
		{at: t0.Add(29 * time.Second), wantNext: t0.Add(30 * time.Second)},
		{at: t0.Add(30 * time.Second), wantHandled: 1},
	})
}

// running runs d.Run until the test ends, and returns a channel closed
// when Run has returned.
func running(t *testing.T, ctx context.Context, d *Dispatcher) <-chan struct{} {
	t.Helper()
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := d.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	return stopped
}

func TestRunRunsATaskNotBeforeItsETA(t *testing.T) {
	t.Parallel()
	s := tempStore(t)
	handled := make(chan time.Time, 1)
	d := New(s, func(context.Context, task.Task) error { handled <- time.Now(); return nil }, Options{Now: time.Now, Logger: quiet})
	ctx, cancel := context.WithCancel(t.Context())
	stopped := running(t, ctx, d)
	eta := time.Now().Add(20 * time.Millisecond)
	must(t, d.Post(ctx, enqueue(t, s, tick(1, eta))))
	if at := <-handled; at.Before(eta) {
		t.Errorf("task ran at %v, before its ETA %v", at, eta)
	}
	cancel()
	<-stopped
}

// sleptUntil waits, within 10 s, for d to go to sleep until at.
func sleptUntil(t *testing.T, asleep <-chan time.Time, at time.Time) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case until := <-asleep:
			if until.Equal(at) {
				return
			}
		case <-timeout:
			t.Fatalf("the dispatcher never slept until %v", at)
		}
	}
}

// heldBy claims for another owner, looking at the row as it will be at
// at with every owner alive, and reports whether the task was held.
func heldBy(t *testing.T, s *sqlite.Store, at time.Time) bool {
	t.Helper()
	got, _, _, err := s.ClaimTasks(t.Context(), taskrows.Claim{Owner: "B", Now: at, Max: 10, Lease: time.Minute, OrphanAfter: 24 * time.Hour})
	must(t, err)
	return len(got) == 0
}

// claimedAhead runs a dispatcher of s that claims an hour ahead, with
// prepare as its Options.Prepare, posts a task due at eta, and returns
// once Run holds it, claimed; stop stops Run and waits for it to return.
// The handler, and what prepare leaves, send the times they ran at.
func claimedAhead(t *testing.T, s *sqlite.Store, eta time.Time, prepare task.Preparer) (handled <-chan time.Time, stop func()) {
	t.Helper()
	ran := make(chan time.Time, 1)
	d := New(s, func(context.Context, task.Task) error { ran <- time.Now(); return nil },
		Options{Now: time.Now, Ahead: time.Hour, Poll: time.Hour, Heartbeat: time.Hour, OrphanAfter: 3 * time.Hour, Logger: quiet, Prepare: prepare})
	held := make(chan task.Task, 1)
	d.hooks.holding = func(tk task.Task) { held <- tk }
	ctx, cancel := context.WithCancel(t.Context())
	stopped := running(t, ctx, d)
	must(t, d.Post(ctx, enqueue(t, s, tick(1, eta))))
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the dispatcher never held the task claimed ahead")
	}
	return ran, func() {
		cancel()
		<-stopped
	}
}

// A task claimed ahead is held from its claim on, so the claim's commit
// is not in its lateness, and still starts at its ETA, not before: with
// no Prepare, and with one that takes nothing of it.
func TestRunClaimsAheadAndStartsAtTheETA(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		prepare bool
	}{{"no preparer", false}, {"nothing prepared", true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := tempStore(t)
			eta := time.Now().Add(300 * time.Millisecond)
			var prepare task.Preparer
			var offered <-chan time.Time
			if c.prepare {
				prepare, offered, _ = preparing(false)
			}
			handled, stop := claimedAhead(t, s, eta, prepare)
			defer stop()
			if !heldBy(t, s, eta.Add(time.Second)) {
				t.Errorf("the task is free at its ETA; want it held by the dispatcher that claimed it ahead")
			}
			if at := <-handled; at.Before(eta) {
				t.Errorf("task ran at %v, before its ETA %v", at, eta)
			}
			if c.prepare && len(offered) != 1 {
				t.Error("the task was not offered to Prepare")
			}
		})
	}
}

// Run tells Options.Idle until when it sleeps with nothing in hand: until
// it claims the next task ahead of its ETA, not the Poll it would
// otherwise sleep for.
func TestRunTellsIdleUntilWhenItSleeps(t *testing.T) {
	t.Parallel()
	s := tempStore(t)
	eta := time.Now().Add(time.Hour)
	idle := make(chan time.Time, 100)
	d := New(s, func(context.Context, task.Task) error { return nil },
		Options{Now: time.Now, Ahead: time.Minute, Poll: 3 * time.Hour, Heartbeat: 3 * time.Hour, OrphanAfter: 6 * time.Hour, Logger: quiet,
			Idle: func(until time.Time) {
				select {
				case idle <- until:
				default: // Idle must not block
				}
			}})
	ctx, cancel := context.WithCancel(t.Context())
	stopped := running(t, ctx, d)
	defer func() {
		cancel()
		<-stopped
	}()
	must(t, d.Post(ctx, enqueue(t, s, tick(1, eta))))
	sleptUntil(t, idle, eta.Add(-time.Minute))
}

// Run tells Options.Idle nothing while it holds a task, even one it only
// claimed ahead and waits for: a collection in that sleep would run into
// the task's start (and, in a burst, into the other handlers').
func TestRunTellsIdleNothingWithATaskInHand(t *testing.T) {
	t.Parallel()
	s := tempStore(t)
	eta := time.Now().Add(time.Hour)
	// From the claim on, the task is in hand.
	var held atomic.Bool
	var told atomic.Int32
	d := New(s, func(context.Context, task.Task) error { return nil },
		Options{Now: time.Now, Ahead: 2 * time.Hour, Poll: 3 * time.Hour, Heartbeat: 3 * time.Hour, OrphanAfter: 6 * time.Hour, Logger: quiet,
			Idle: func(time.Time) {
				if held.Load() {
					told.Add(1)
				}
			}})
	d.hooks.holding = func(task.Task) { held.Store(true) }
	asleep := make(chan struct{}, 100)
	d.hooks.sleeping = func(time.Time) {
		if held.Load() {
			asleep <- struct{}{}
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	stopped := running(t, ctx, d)
	must(t, d.Post(ctx, enqueue(t, s, tick(1, eta))))
	<-asleep // Run sleeps with the task in hand; Idle would be told now
	cancel()
	<-stopped
	if n := told.Load(); n > 0 {
		t.Errorf("Idle told of %d sleeps with the task claimed ahead in hand", n)
	}
}

// preparing is a task.Preparer that records when it was offered a task,
// prepares it if ok, and leaves a rest that sends when it ran.
func preparing(ok bool) (task.Preparer, <-chan time.Time, <-chan time.Time) {
	offered, rest := make(chan time.Time, 1), make(chan time.Time, 1)
	return func(context.Context, task.Task) (task.Handler, bool) {
		offered <- time.Now()
		if !ok {
			return nil, false
		}
		return func(context.Context, task.Task) error { rest <- time.Now(); return nil }, true
	}, offered, rest
}

// A task claimed ahead is offered to Prepare as it is claimed, long
// before its ETA; what Prepare leaves runs in the handler's place, at the
// ETA and not before.
func TestRunPreparesAsItClaimsAheadAndRunsTheRestAtTheETA(t *testing.T) {
	t.Parallel()
	s := tempStore(t)
	eta := time.Now().Add(time.Second)
	prepare, offered, rest := preparing(true)
	handled, stop := claimedAhead(t, s, eta, prepare)
	defer stop()
	if at := <-offered; !at.Before(eta.Add(-500 * time.Millisecond)) {
		t.Errorf("offered to Prepare at %v, %v before its ETA; want it offered as it was claimed, an hour ahead", at, eta.Sub(at))
	}
	if at := <-rest; at.Before(eta) {
		t.Errorf("the rest ran at %v, before the ETA %v", at, eta)
	}
	if len(handled) != 0 {
		t.Error("the handler ran too; want only what Prepare left")
	}
}

// A dispatcher that stops hands back at once what it claimed ahead and
// took nothing of: another process need not wait for the lease to end.
func TestRunHandsBackWhatItClaimedAheadWhenItStops(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		prepare task.Preparer
	}{{"no preparer", nil}, {"nothing prepared", func(context.Context, task.Task) (task.Handler, bool) { return nil, false }}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := tempStore(t)
			eta := time.Now().Add(30 * time.Minute)
			handled, stop := claimedAhead(t, s, eta, c.prepare)
			stop()
			if heldBy(t, s, eta) {
				t.Error("the task is still held after the dispatcher stopped; want it handed back")
			}
			if len(handled) != 0 {
				t.Errorf("handled at %v, due in half an hour", <-handled)
			}
		})
	}
}

// A dispatcher that stops before the ETA of a task it prepared ahead does
// not hand it back: what was prepared (a launch committed) is carried out
// at its ETA, as a running handler goes on after a stop; Run returns
// once it has, and the task is acknowledged.
func TestRunCarriesOutWhatItPreparedWhenItStops(t *testing.T) {
	t.Parallel()
	s := tempStore(t)
	eta := time.Now().Add(500 * time.Millisecond)
	prepare, offered, rest := preparing(true)
	_, stop := claimedAhead(t, s, eta, prepare)
	<-offered
	stop()
	select {
	case at := <-rest:
		if at.Before(eta) {
			t.Errorf("the rest ran at %v, before the ETA %v", at, eta)
		}
	default:
		t.Fatal("Run returned without carrying out what it prepared")
	}
	if next, ok, err := s.NextDue(t.Context(), time.Minute); err != nil || ok {
		t.Errorf("after the stop a task is due at %v (%v); want the task acknowledged, none left", next, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestPostedWakesALongSleep(t *testing.T) {
	t.Parallel()
	s := tempStore(t)
	far := tick(1, time.Now().Add(time.Hour))
	enqueue(t, s, far)
	handled := make(chan task.Task, 2)
	// Nothing but Post can make this dispatcher look at the table
	// within the test: it polls and heartbeats hourly.
	d := New(s, func(_ context.Context, tk task.Task) error { handled <- tk; return nil },
		Options{Now: time.Now, Poll: time.Hour, Heartbeat: time.Hour, OrphanAfter: 3 * time.Hour, Logger: quiet})
	asleep := make(chan time.Time, 100)
	d.hooks.sleeping = func(until time.Time) { asleep <- until }
	ctx, cancel := context.WithCancel(t.Context())
	stopped := running(t, ctx, d)
	if until := <-asleep; until.Before(far.ETA.Add(-time.Minute)) {
		t.Fatalf("the dispatcher sleeps until %v only; the test needs a long sleep", until)
	}
	near := tick(2, time.Now())
	must(t, d.Post(ctx, enqueue(t, s, near)))
	if got := <-handled; got.Name() != near.Name() {
		t.Errorf("handled %v, want the posted %v", got, near)
	}
	cancel()
	<-stopped
	if len(handled) != 0 {
		t.Errorf("also handled %v, due in an hour", <-handled)
	}
}

func TestRunRetriesAFailedTask(t *testing.T) {
	t.Parallel()
	s := tempStore(t)
	var mu sync.Mutex
	calls := 0
	succeeded := make(chan struct{})
	d := New(s, func(context.Context, task.Task) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			return errors.New("first delivery fails")
		}
		close(succeeded)
		return nil
	}, Options{Now: time.Now, BackoffMin: time.Millisecond, Logger: quiet})
	ctx, cancel := context.WithCancel(t.Context())
	stopped := running(t, ctx, d)
	must(t, d.Post(ctx, enqueue(t, s, tick(1, time.Now()))))
	<-succeeded
	cancel()
	<-stopped
	if n, err := s.CountTasks(t.Context()); err != nil || n != 0 {
		t.Errorf("%d tasks left (%v), want the retried one deleted", n, err)
	}
}

func TestRunTakesOverACrashedOwnersTask(t *testing.T) {
	t.Parallel()
	s := tempStore(t)
	enqueue(t, s, tick(1, time.Now()))
	claimed, _, _, err := s.ClaimTasks(t.Context(), taskrows.Claim{Owner: "crashed", Now: time.Now(), Max: 1, Lease: time.Hour, OrphanAfter: time.Hour})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("crashed owner's claim = %v, %v", claimed, err)
	}
	handled := make(chan struct{})
	// The lease would hold for an hour: only the silence of its owner can
	// free the task within the test.
	d := New(s, func(context.Context, task.Task) error { close(handled); return nil },
		Options{Now: time.Now, OrphanAfter: 100 * time.Millisecond, Heartbeat: 20 * time.Millisecond, Logger: quiet})
	ctx, cancel := context.WithCancel(t.Context())
	stopped := running(t, ctx, d)
	<-handled
	cancel()
	<-stopped
}

func TestTwoDispatchersOnOneFileHandleEachTaskOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sundial.db")
	stores := []*sqlite.Store{openStore(t, path), openStore(t, path)}
	const n = 200
	var tasks []task.Task
	for i := range n {
		tasks = append(tasks, task.Task{Kind: task.TickLater, JobID: fmt.Sprintf("p/j%03d", i), Nonce: 1, ETA: time.Now()})
	}
	for i, tk := range tasks {
		if _, err := stores[i%2].Update(t.Context(), tk.JobID, func(tx store.Tx) error { return tx.Enqueue(tk) }); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	count := map[string]int{}
	byOwner := map[string]int{}
	all := make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	var stopped []<-chan struct{}
	for i, s := range stores {
		owner := fmt.Sprintf("process%d", i)
		d := New(s, func(_ context.Context, tk task.Task) error {
			mu.Lock()
			defer mu.Unlock()
			count[tk.Name()]++
			byOwner[owner]++
			if len(count) == n && count[tk.Name()] == 1 {
				close(all)
			}
			return nil
		}, Options{Owner: owner, Workers: 4, Now: time.Now, Logger: quiet})
		stopped = append(stopped, running(t, ctx, d))
	}
	<-all
	cancel()
	for _, s := range stopped {
		<-s
	}
	for name, c := range count {
		if c != 1 {
			t.Errorf("%s handled %d times", name, c)
		}
	}
	t.Logf("handled per process: %v", byOwner)
}

func TestRunReturnsAfterCancelOnlyOnceHandlersAreDone(t *testing.T) {
	t.Parallel()
	s := tempStore(t)
	started := make(chan task.Task, 2)
	release := make(chan struct{})
	var finished sync.WaitGroup
	d := New(s, func(ctx context.Context, tk task.Task) error {
		finished.Add(1)
		defer finished.Done()
		started <- tk
		<-release
		// The handler's context is not the cancelled one.
		return ctx.Err()
	}, Options{Now: time.Now, Workers: 2, Heartbeat: time.Hour, OrphanAfter: 2 * time.Hour, Poll: time.Hour, Logger: quiet})
	asleep := make(chan time.Time, 100)
	d.hooks.sleeping = func(until time.Time) { asleep <- until }
	ctx, cancel := context.WithCancel(t.Context())
	stopped := running(t, ctx, d)
	<-asleep
	must(t, d.Post(ctx, enqueue(t, s, tick(1, time.Now()))))
	<-started
	// Cancel while Run sleeps with the handler running: its second sleep,
	// as nothing but Post and the handler can wake it.
	<-asleep
	cancel()
	// A task posted after cancel is not claimed.
	must(t, d.Post(t.Context(), enqueue(t, s, tick(2, time.Now()))))
	select {
	case <-stopped:
		t.Fatal("Run returned while a handler was running")
	default:
	}
	close(release)
	<-stopped
	finished.Wait()
	if len(started) != 0 {
		t.Errorf("Run started %v after cancel", <-started)
	}
	tasks, err := s.Tasks(t.Context(), 10)
	if err != nil || len(tasks) != 1 || tasks[0].Nonce != 2 {
		t.Errorf("tasks left = %v, %v; want only the one posted after cancel (the handled one deleted)", tasks, err)
	}
}

// Once StopGrace has passed after cancel, a handler still running sees its
// context cancelled, saying why; what it returns is recorded as for any
// failure, so its task stays queued for the next start.
func TestRunStopsHandlersAfterStopGrace(t *testing.T) {
	t.Parallel()
	s := tempStore(t)
	started := make(chan struct{})
	cause := make(chan error, 1)
	d := New(s, func(ctx context.Context, tk task.Task) error {
		close(started)
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return ctx.Err()
	}, Options{Now: time.Now, StopGrace: 10 * time.Millisecond, Logger: quiet})
	ctx, cancel := context.WithCancel(t.Context())
	stopped := running(t, ctx, d)
	must(t, d.Post(ctx, enqueue(t, s, tick(1, time.Now()))))
	<-started
	cancel()
	<-stopped
	if got := <-cause; !errors.Is(got, task.ErrStopping) {
		t.Errorf("the handler's context ended with %v; want %v", got, task.ErrStopping)
	}
	tasks, err := s.Tasks(t.Context(), 10)
	if err != nil || len(tasks) != 1 || tasks[0].Nonce != 1 {
		t.Errorf("tasks left = %v, %v; want the stopped one, handed back", tasks, err)
	}
}

// A task a handler enqueues already due is written claimed by the
// dispatcher (adopted) and starts once posted, without a claim of its own;
// one the handler's caller never posts is handed back and claimed, unless
// it was lost meanwhile.
func TestRunDueRunsAdoptedTasks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		post, lose  bool
		wantHandled int
		wantCommits uint64
	}{
		// The claim of tick 1, the handler's Update, the claim that
		// acknowledges both and finds nothing due.
		{name: "posted", post: true, wantHandled: 2, wantCommits: 3},
		// The last but one claim hands tick 2 back and claims it again.
		{name: "not posted", wantHandled: 2, wantCommits: 4},
		// The claim of tick 1, the handler's Update, the claim that hands
		// back the lost tick 2 and finds nothing due; the loss is written
		// behind the store's back, as a fault's would be.
		{name: "lost", lose: true, wantHandled: 1, wantCommits: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "sundial.db")
			s := openStore(t, path)
			enqueue(t, s, tick(1, t0))
			var ran []string
			var d *Dispatcher
			d = New(s, func(ctx context.Context, tk task.Task) error {
				ran = append(ran, tk.Name())
				if tk.Nonce != 1 {
					return nil
				}
				next := enqueue(t, s, tick(2, t0))
				if tc.lose {
					return sqlitetest.DeleteTask(ctx, path, next[0].Name())
				}
				if tc.post {
					return d.Post(ctx, next)
				}
				return nil
			}, Options{Now: fakeClock(t), Logger: quiet})
			before := s.Stats().Commits
			runSteps(t, d, []step{{at: t0, wantHandled: tc.wantHandled}})
			if got := s.Stats().Commits - before; got != tc.wantCommits {
				t.Errorf("RunDue committed %d times, want %d", got, tc.wantCommits)
			}
			if len(ran) != tc.wantHandled {
				t.Errorf("ran %q, want %d tasks, each once", ran, tc.wantHandled)
			}
		})
	}
}

// RunDue starts an adopted task once it is posted, while the task claimed
// with the one that posted it still runs: a step's launches need not wait
// for the slowest tick of the step. Tick 1 posts tick 3 and returns; tick
// 2 returns only once tick 3 has started, so a RunDue that ran a round to
// its end before starting what it posted would never start tick 3.
func TestRunDueStartsAdoptedTasksAlongsideTheirRound(t *testing.T) {
	t.Parallel()
	s := tempStore(t)
	enqueue(t, s, tick(1, t0), tick(2, t0))
	started3 := make(chan struct{})
	var d *Dispatcher
	d = New(s, func(ctx context.Context, tk task.Task) error {
		switch tk.Nonce {
		case 1:
			return d.Post(ctx, enqueue(t, s, tick(3, t0)))
		case 2:
			select {
			case <-started3:
				return nil
			case <-time.After(10 * time.Second):
				return errors.New("tick 3 did not start while tick 2 ran")
			}
		default:
			close(started3)
			return nil
		}
	}, Options{Now: fakeClock(t), Logger: quiet})
	handled, _, ok, err := d.RunDue(t.Context(), t0)
	if err != nil || handled != 3 || ok {
		t.Errorf("RunDue = %d handled, more due %v, %v; want all 3 run and done at once", handled, ok, err)
	}
}

// Run starts an adopted task when it is posted, without a claim; one never
// posted is handed back within two heartbeats and runs as claimed.
func TestRunRunsAdoptedTasks(t *testing.T) {
	t.Parallel()
	for _, post := range []bool{true, false} {
		t.Run(fmt.Sprintf("posted=%v", post), func(t *testing.T) {
			t.Parallel()
			s := tempStore(t)
			handled := make(chan task.Task, 2)
			opts := Options{Now: time.Now, Poll: time.Hour, Heartbeat: time.Hour, OrphanAfter: 3 * time.Hour, Logger: quiet}
			if !post {
				opts.Heartbeat = 20 * time.Millisecond
			}
			d := New(s, func(_ context.Context, tk task.Task) error { handled <- tk; return nil }, opts)
			asleep := make(chan time.Time, 1000)
			d.hooks.sleeping = func(until time.Time) { asleep <- until }
			ctx, cancel := context.WithCancel(t.Context())
			stopped := running(t, ctx, d)
			<-asleep
			due := tick(1, time.Now())
			enqueued := enqueue(t, s, due)
			// Adopted: another dispatcher on the file finds it held.
			if got, _, _, err := s.ClaimTasks(ctx, taskrows.Claim{Owner: "B", Now: time.Now(), Max: 10, Lease: time.Minute, OrphanAfter: time.Hour}); err != nil || len(got) != 0 {
				t.Errorf("another owner claimed %v, %v; want nothing: the task is adopted", got, err)
			}
			if post {
				must(t, d.Post(ctx, enqueued))
			}
			select {
			case got := <-handled:
				if got.Name() != due.Name() {
					t.Errorf("handled %v, want %v", got, due)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("%v not handled within 10s", due)
			}
			cancel()
			<-stopped
			if len(handled) != 0 {
				t.Errorf("also handled %v", <-handled)
			}
		})
	}
}

// A task handed back as a matter of course (task.ErrRetryLater: a project
// at its limit of calls in flight) is delivered again but not logged as a
// failure: a big project at its limit would flood the log. Any other error
// is a warning.
func TestRunLogsOnlyRealFailuresAsWarnings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		warn bool
	}{
		{fmt.Errorf("busy (%w)", task.ErrRetryLater), false},
		{errors.New("the store is read-only"), true},
	} {
		s := tempStore(t)
		var mu sync.Mutex
		calls := 0
		succeeded := make(chan struct{})
		logs := &levels{}
		d := New(s, func(context.Context, task.Task) error {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if calls == 1 {
				return tc.err
			}
			close(succeeded)
			return nil
		}, Options{Now: time.Now, BackoffMin: time.Millisecond, Logger: slog.New(logs)})
		ctx, cancel := context.WithCancel(t.Context())
		stopped := running(t, ctx, d)
		must(t, d.Post(ctx, enqueue(t, s, tick(1, time.Now()))))
		<-succeeded
		cancel()
		<-stopped
		if got := logs.count(slog.LevelWarn) > 0; got != tc.warn {
			t.Errorf("handler error %q: logged a warning %v, want %v", tc.err, got, tc.warn)
		}
		if logs.count(slog.LevelDebug) == 0 && !tc.warn {
			t.Errorf("handler error %q: not logged at all; want it at debug level", tc.err)
		}
	}
}

// levels is a slog handler that counts records by level.
type levels struct {
	mu sync.Mutex
	n  map[slog.Level]int
}

func (l *levels) Enabled(context.Context, slog.Level) bool { return true }
func (l *levels) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *levels) WithGroup(string) slog.Handler            { return l }
func (l *levels) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == nil {
		l.n = map[slog.Level]int{}
	}
	l.n[r.Level]++
	return nil
}

func (l *levels) count(level slog.Level) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n[level]
}

// TestRunWritesARefusedAckWithItsNextClaim: the store refuses the ack of a
// task that succeeded (a connection cut); the dispatcher keeps it and
// writes it with its next claim, so the task is gone long before its
// 10-minute lease would have freed it, and it runs once. Before, the ack
// was dropped and the task came again when its lease ended.
func TestRunWritesARefusedAckWithItsNextClaim(t *testing.T) {
	t.Parallel()
	s := tempStore(t)
	rows := &refusingAck{Store: s}
	rows.refuse.Store(1)
	var runs atomic.Int32
	d := New(rows, func(context.Context, task.Task) error { runs.Add(1); return nil },
		Options{Now: time.Now, Poll: 20 * time.Millisecond, Logger: quiet})
	ctx, cancel := context.WithCancel(t.Context())
	stopped := running(t, ctx, d)
	must(t, d.Post(ctx, enqueue(t, s, tick(1, time.Now()))))
	deadline := time.After(10 * time.Second)
	for {
		n, err := s.CountTasks(t.Context())
		must(t, err)
		if n == 0 {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("the task is still queued 10 s after its refused ack (%d runs)", runs.Load())
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	<-stopped
	if rows.refuse.Load() > 0 {
		t.Error("the store was never asked to ack")
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the task ran %d times, want once", n)
	}
}

// refusingAck refuses AckTasks while refuse is positive.
type refusingAck struct {
	*sqlite.Store
	refuse atomic.Int32
}

func (r *refusingAck) AckTasks(ctx context.Context, owner string, done []string, retry []taskrows.Retry) error {
	if r.refuse.Add(-1) >= 0 {
		return errors.New("the connection was terminated")
	}
	return r.Store.AckTasks(ctx, owner, done, retry)
}

// TestRunRecoversAClaimWhoseAnswerWasLost: the store commits a claim and
// then loses its answer (a connection cut, a database that crashed after
// its commit), so the dispatcher holds a task it does not know of. Its
// next claim takes it again (taskrows.Claim.Recover), and it runs, once,
// long before its 10-minute lease would have freed it; before, it waited
// for the lease, and its job for the watchdog.
func TestRunRecoversAClaimWhoseAnswerWasLost(t *testing.T) {
	t.Parallel()
	s := tempStore(t)
	rows := &losingClaim{Store: s}
	runs := make(chan task.Task, 4)
	d := New(rows, func(_ context.Context, tk task.Task) error { runs <- tk; return nil },
		Options{Now: time.Now, Poll: 20 * time.Millisecond, Logger: quiet})
	// Enqueued before Run adopts: its first claim takes the task.
	tk := enqueue(t, s, tick(1, time.Now()))[0]
	ctx, cancel := context.WithCancel(t.Context())
	stopped := running(t, ctx, d)
	select {
	case got := <-runs:
		if got.Name() != tk.Name() {
			t.Errorf("ran %s, want %s", got.Name(), tk.Name())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the task claimed by the claim whose answer was lost did not run within 10 s (a claim lost: %v)", rows.lost.Load())
	}
	if !rows.lost.Load() {
		t.Error("no claim's answer was lost: the test tested nothing")
	}
	time.Sleep(100 * time.Millisecond)
	cancel()
	<-stopped
	if len(runs) > 0 {
		t.Errorf("the task ran again: %v", <-runs)
	}
}

// TestRunRecoversAnAdoptionWhoseAnswerWasLost: an Update writes a due
// task claimed by the dispatcher and its commit's answer is lost, so
// Adopted never names it to the dispatcher; Lost gives its clock reading,
// and the next claim takes the task again.
func TestRunRecoversAnAdoptionWhoseAnswerWasLost(t *testing.T) {
	t.Parallel()
	s := tempStore(t)
	rows := &losingAdoption{Store: s}
	runs := make(chan task.Task, 1024)
	d := New(rows, func(_ context.Context, tk task.Task) error { runs <- tk; return nil },
		Options{Now: time.Now, Poll: 20 * time.Millisecond, Logger: quiet})
	ctx, cancel := context.WithCancel(t.Context())
	stopped := running(t, ctx, d)
	// Run adopts once it has started: the first task adopted is lost.
	var tk task.Task
	for deadline := time.Now().Add(10 * time.Second); !rows.lost.Load(); {
		if time.Now().After(deadline) {
			t.Fatal("no adoption in 10 s")
		}
		tk = enqueue(t, s, tick(time.Now().UnixNano(), time.Now()))[0]
		must(t, d.Post(ctx, []task.Task{tk}))
		time.Sleep(10 * time.Millisecond)
	}
	for deadline := time.After(10 * time.Second); ; {
		select {
		case got := <-runs:
			if got.Name() != tk.Name() {
				continue // one enqueued before Run adopted, claimed
			}
		case <-deadline:
			t.Fatal("the task of the adoption whose answer was lost did not run within 10 s")
		}
		break
	}
	cancel()
	<-stopped
}

// losingClaim commits claims, and loses the answer of the first that took
// a task.
type losingClaim struct {
	*sqlite.Store
	lost atomic.Bool
}

func (l *losingClaim) ClaimTasks(ctx context.Context, c taskrows.Claim) ([]taskrows.Claimed, time.Time, bool, error) {
	claimed, next, ok, err := l.Store.ClaimTasks(ctx, c)
	if err == nil && len(claimed) > 0 && l.lost.CompareAndSwap(false, true) {
		return nil, time.Time{}, false, fmt.Errorf("unexpected EOF (%w)", taskrows.ErrOutcomeUnknown)
	}
	return claimed, next, ok, err
}

// losingAdoption commits adoptions, and reports the first of them lost
// instead of adopted.
type losingAdoption struct {
	*sqlite.Store
	lost atomic.Bool
}

func (l *losingAdoption) Adopt(a *taskrows.Adoption) {
	if a == nil {
		l.Store.Adopt(nil)
		return
	}
	var mu sync.Mutex
	var read time.Time
	w := *a
	w.Now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		read = a.Now()
		return read
	}
	w.Adopted = func(tasks []task.Task) {
		if l.lost.CompareAndSwap(false, true) {
			mu.Lock()
			defer mu.Unlock()
			a.Lost(read)
			return
		}
		a.Adopted(tasks)
	}
	l.Store.Adopt(&w)
}
