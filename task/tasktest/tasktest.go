// Package tasktest is the conformance suite of the task queues: task/local
// (rows in the SQLite file, delivered by its dispatcher) and
// task/cloudtasks (over the Cloud Tasks stand-in, cloudtaskstest). Each
// runs Run from its own tests, over real storage, and must pass it
// unchanged.
//
// The suite steps delivery on a fake clock it moves itself, so it asserts
// times exactly and never sleeps. What the engine may rely on is the same
// for both backends: every posted task is delivered at least once, not
// before its ETA; a second post of a queued task is no second task; a
// failed delivery comes again after a backoff; a queue that stops loses
// nothing. Where the backends differ the difference is a field of Backend,
// and the suite checks each backend against what it declares:
//
//   - Backoff: the wait before each redelivery of a failing task (local:
//     Options.BackoffMin doubling up to BackoffMax; Cloud Tasks: the
//     queue's RetryConfig, doubling MaxDoublings times and then linear).
//   - NameHeld: how long a name stays refused once its task was
//     delivered. Local deletes the row, so the same name posted again
//     right after is a new task, delivered again; Cloud Tasks refuses a
//     name for about an hour after its task ended, so a re-post within
//     that hour is taken as done and never delivered. The engine copes
//     with both: a task that matters carries a fresh nonce, hence a fresh
//     name.
//   - Recovery: how long, after a queue stops without notice, the tasks
//     it had taken stay with it. Local's dispatcher holds what it claimed
//     or adopted until its owner has been silent for OrphanAfter (or the
//     lease ends); Cloud Tasks holds everything in the service, so a new
//     app instance gets it at once.
//   - The ETA of a redelivered task: local gives the time of the retry
//     (its row's ETA moved), Cloud Tasks the ETA it was posted with. The
//     suite compares ETAs on first deliveries only; every other field must
//     come back as posted.
package tasktest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/task"
)

// Queue is one backend's queue under test, as Backend.Open made it.
type Queue interface {
	// Post makes tasks pending as the engine does: committed in a store
	// transaction, then task.Queue.Post (local), or created by Post
	// (Cloud Tasks). It may be called from a handler.
	Post(ctx context.Context, tasks ...task.Task) error
	// DeliverDue delivers every task due on the clock, including those
	// due then that handlers post meanwhile, waits until their outcomes
	// are recorded, and returns how many deliveries it made.
	DeliverDue(t *testing.T) int
	// Restart drops the queue as a crashed process would, without
	// handing anything back, and starts a new one over the same storage
	// (the same SQLite file, reopened; the same Cloud Tasks service),
	// delivering to the same handler. DeliverDue then uses the new one.
	Restart(t *testing.T)
}

// Backend is what the suite needs of one backend, and how it differs
// from the others (see the package comment).
type Backend struct {
	// Open returns a queue over new, empty storage that delivers to
	// handler and reads time from clock. It releases what it holds when
	// the test ends (t.Cleanup).
	Open func(t *testing.T, clock *fakeclock.Clock, handler task.Handler) Queue
	// Backoff is the wait before the redelivery that follows a task's
	// n-th failure in a row (n ≥ 1), as Open configures the queue.
	Backoff func(n int) time.Duration
	// NameHeld is how long after its task was delivered a name is still
	// refused; 0: a re-post right after delivery is a new task.
	NameHeld time.Duration
	// Recovery is how long after Restart the tasks the old queue had
	// taken may wait before they are delivered again.
	Recovery time.Duration
}

// Run runs the suite. Subtests run in parallel, each on its own queue.
func Run(t *testing.T, b Backend) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b Backend)
	}{
		{"every posted task is delivered, as posted", testDeliversEveryTask},
		{"a task posted twice is delivered once", testDuplicateName},
		{"a name posted again after delivery is held for NameHeld", testNameAfterDelivery},
		{"no task is delivered before its ETA", testNotBeforeETA},
		{"a failed delivery comes again after its backoff", testRedeliversAfterFailure},
		{"a restarted queue delivers what was pending", testNothingLostOnRestart},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, b)
		})
	}
}

// t0 is the suite's anchor.
var t0 = time.Date(2026, 3, 8, 9, 0, 0, 0, time.UTC)

func tick(job string, nonce int64, eta time.Time) task.Task {
	return task.Task{Kind: task.TickLater, JobID: "p/" + job, Nonce: nonce, ETA: eta}
}

func start(job string, nonce int64, eta time.Time, inv string, attempt int) task.Task {
	return task.Task{Kind: task.StartInvocation, JobID: "p/" + job, Nonce: nonce, ETA: eta, Invocation: inv, Attempt: attempt}
}

func poll(job string, nonce int64, eta time.Time, inv string, attempt int) task.Task {
	return task.Task{Kind: task.PollInvocation, JobID: "p/" + job, Nonce: nonce, ETA: eta, Invocation: inv, Attempt: attempt}
}

// delivery is one call of the handler.
type delivery struct {
	task task.Task
	at   time.Time // on the clock
	err  error     // what the handler answered
}

// rig is a queue with a handler that records every delivery and answers
// as told, and what the suite posted.
type rig struct {
	clock *fakeclock.Clock
	q     Queue

	mu     sync.Mutex
	posted map[string]task.Task // by name: the first post
	got    []delivery
	answer func(task.Task, int) error // the n-th delivery (1-based) of a task; nil: success
}

func newRig(t *testing.T, b Backend) *rig {
	r := &rig{clock: fakeclock.New(t0), posted: map[string]task.Task{}}
	r.q = b.Open(t, r.clock, r.handle)
	return r
}

func (r *rig) handle(_ context.Context, tk task.Task) error {
	r.mu.Lock()
	n := 1
	for _, d := range r.got {
		if d.task.Name() == tk.Name() {
			n++
		}
	}
	answer, at := r.answer, r.clock.Now()
	r.mu.Unlock()
	// Unlocked: an answer may post tasks, which the rig notes.
	var err error
	if answer != nil {
		err = answer(tk, n)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, delivery{task: tk, at: at, err: err})
	return err
}

func (r *rig) post(t *testing.T, tasks ...task.Task) {
	t.Helper()
	r.note(tasks)
	if err := r.q.Post(t.Context(), tasks...); err != nil {
		t.Fatalf("Post(%v): %v", tasks, err)
	}
}

// note records tasks as posted, for checks of what comes back.
func (r *rig) note(tasks []task.Task) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, tk := range tasks {
		if _, ok := r.posted[tk.Name()]; !ok {
			r.posted[tk.Name()] = tk
		}
	}
}

// deliverAt moves the clock to at and delivers what is due, expecting
// want deliveries.
func (r *rig) deliverAt(t *testing.T, at time.Time, want int) {
	t.Helper()
	r.clock.Set(at)
	if n := r.q.DeliverDue(t); n != want {
		t.Fatalf("DeliverDue at t0+%v = %d deliveries, want %d; the handler was handed, in order: %s", at.Sub(t0), n, want, r.handed())
	}
}

// handed lists what reached the handler so far, with its answers: a
// delivery the queue counts and the handler never saw failed on its way.
func (r *rig) handed() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for i, d := range r.got {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s at t0+%v", d.task.Name(), d.at.Sub(t0))
		if d.err != nil {
			fmt.Fprintf(&b, " (%v)", d.err)
		}
	}
	return b.String()
}

// deliveries returns the deliveries so far, and checks each against what
// was posted: no unknown task, no field changed (the ETA on first
// deliveries only), none before its posted ETA.
func (r *rig) deliveries(t *testing.T) []delivery {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	for _, d := range r.got {
		name := d.task.Name()
		want, ok := r.posted[name]
		switch {
		case !ok:
			t.Errorf("delivered %v, which was never posted", d.task)
			continue
		case d.at.Before(want.ETA):
			t.Errorf("%s delivered at t0+%v, before its ETA t0+%v", name, d.at.Sub(t0), want.ETA.Sub(t0))
		case !seen[name] && !d.task.ETA.Equal(want.ETA):
			t.Errorf("%s first delivered with ETA %v, posted with %v", name, d.task.ETA, want.ETA)
		}
		seen[name] = true
		got := d.task
		got.ETA = want.ETA
		if got != want {
			t.Errorf("delivered %v, posted %v", d.task, want)
		}
	}
	return slices.Clone(r.got)
}

// succeeded returns the names of the tasks whose delivery succeeded, each
// once, sorted.
func succeeded(ds []delivery) []string {
	var names []string
	for _, d := range ds {
		if d.err == nil && !slices.Contains(names, d.task.Name()) {
			names = append(names, d.task.Name())
		}
	}
	slices.Sort(names)
	return names
}

func names(tasks ...task.Task) []string {
	var out []string
	for _, tk := range tasks {
		out = append(out, tk.Name())
	}
	slices.Sort(out)
	return out
}

// drained checks that nothing is left: a day later nothing comes.
func (r *rig) drained(t *testing.T) {
	t.Helper()
	r.deliverAt(t, r.clock.Now().Add(24*time.Hour), 0)
}

// Every task posted is delivered, with the fields it was posted with:
// ticks and starts, of several jobs, posted one by one and together, and
// those a handler posts while being delivered.
func testDeliversEveryTask(t *testing.T, b Backend) {
	r := newRig(t, b)
	followUp := tick("c", 2, t0)
	r.answer = func(tk task.Task, _ int) error {
		if tk.Name() != tick("c", 1, t0).Name() {
			return nil
		}
		// What the engine does: a handler's transaction enqueues the
		// next task, posted once it committed.
		r.note([]task.Task{followUp})
		return r.q.Post(context.Background(), followUp)
	}
	batch := []task.Task{
		tick("a", 1, t0), start("a", 2, t0, "inv-a1", 1), start("a", 3, t0, "inv-a1", 2),
		tick("b", 7, t0.Add(-time.Minute)), tick("c", 1, t0),
		// A poll shares its start's invocation and attempt, not its name.
		poll("a", 4, t0, "inv-a1", 2),
	}
	alone := start("b", 8, t0, "inv-b1", 1)
	r.post(t, batch...)
	r.post(t, alone)
	r.deliverAt(t, t0, len(batch)+2)
	got := r.deliveries(t)
	if want := names(append(batch, alone, followUp)...); !slices.Equal(succeeded(got), want) {
		t.Errorf("delivered %q, want %q", succeeded(got), want)
	}
	r.drained(t)
}

// A second post of a queued task's name is a duplicate, whatever else it
// says: delivered once.
func testDuplicateName(t *testing.T, b Backend) {
	r := newRig(t, b)
	tk := tick("a", 1, t0.Add(time.Minute))
	r.post(t, tk)
	r.post(t, tk)
	again := tk
	again.ETA = t0 // same name, so the same task: its first ETA stands
	if err := r.q.Post(t.Context(), again); err != nil {
		t.Fatalf("a repeat post: %v", err)
	}
	r.deliverAt(t, t0, 0)
	r.deliverAt(t, tk.ETA, 1)
	r.deliveries(t)
	r.drained(t)
}

// Once delivered, a name is refused for NameHeld: a re-post within it is
// taken as done (no error) and never delivered; after it, or at once if
// NameHeld is 0, it is a new task.
func testNameAfterDelivery(t *testing.T, b Backend) {
	r := newRig(t, b)
	tk := tick("a", 1, t0)
	r.post(t, tk)
	r.deliverAt(t, t0, 1)
	if b.NameHeld > 0 {
		r.post(t, tk)
		r.deliverAt(t, t0, 0)
		r.deliverAt(t, t0.Add(b.NameHeld-time.Nanosecond), 0)
		r.clock.Set(t0.Add(b.NameHeld))
	}
	r.post(t, tk)
	r.deliverAt(t, r.clock.Now(), 1)
	if got := r.deliveries(t); len(got) != 2 {
		t.Errorf("%d deliveries, want the first and the one posted after NameHeld (%v)", len(got), b.NameHeld)
	}
	r.drained(t)
}

// A task is not delivered a nanosecond before its ETA, and is at it; a
// task due earlier is not held back by it.
func testNotBeforeETA(t *testing.T, b Backend) {
	r := newRig(t, b)
	later, sooner := tick("a", 1, t0.Add(10*time.Minute)), start("b", 1, t0.Add(time.Second), "inv-b1", 1)
	r.post(t, later, sooner)
	r.deliverAt(t, t0, 0)
	r.deliverAt(t, sooner.ETA.Add(-time.Nanosecond), 0)
	r.deliverAt(t, sooner.ETA, 1)
	r.deliverAt(t, later.ETA.Add(-time.Nanosecond), 0)
	r.deliverAt(t, later.ETA, 1)
	got := r.deliveries(t)
	if len(got) != 2 || got[0].task.Name() != sooner.Name() || !got[1].at.Equal(later.ETA) {
		t.Errorf("deliveries %v, want %s at its ETA, then %s at its own", got, sooner.Name(), later.Name())
	}
	r.drained(t)
}

// A task whose handler fails is delivered again, Backoff(n) after its n-th
// failure and not a nanosecond sooner, until it succeeds; then it is done.
// The other tasks are not held up by it.
func testRedeliversAfterFailure(t *testing.T, b Backend) {
	if b.Backoff(1) <= 0 {
		t.Fatalf("Backoff(1) = %v: a failed task would come back at once", b.Backoff(1))
	}
	r := newRig(t, b)
	const failures = 4
	failing, other := tick("a", 1, t0), tick("b", 1, t0)
	errFail := errors.New("the handler fails")
	r.answer = func(tk task.Task, n int) error {
		if tk.Name() == failing.Name() && n <= failures {
			return fmt.Errorf("delivery %d: %w", n, errFail)
		}
		return nil
	}
	r.post(t, failing, other)
	r.deliverAt(t, t0, 2)
	at := t0
	for n := 1; n <= failures; n++ {
		wait := b.Backoff(n)
		r.deliverAt(t, at.Add(wait-time.Nanosecond), 0)
		at = at.Add(wait)
		r.deliverAt(t, at, 1)
	}
	got := r.deliveries(t)
	if len(got) != failures+2 || got[len(got)-1].err != nil {
		t.Errorf("deliveries %v, want %d failures then a success of %s, and %s once", got, failures, failing.Name(), other.Name())
	}
	r.drained(t)
}

// A queue that stops without notice loses nothing: a new one over the
// same storage delivers the tasks not yet due, the one waiting for its
// retry, those posted just before the stop, and (after Recovery) those
// the old one had taken, each at its time.
func testNothingLostOnRestart(t *testing.T, b Backend) {
	r := newRig(t, b)
	done, failed := tick("a", 1, t0), tick("b", 1, t0)
	later := start("c", 1, t0.Add(time.Hour), "inv-c1", 1)
	r.answer = func(tk task.Task, n int) error {
		if tk.Name() == failed.Name() && n == 1 {
			return errors.New("the first delivery fails")
		}
		return nil
	}
	r.post(t, done, failed, later)
	r.deliverAt(t, t0, 2)
	justBefore := tick("d", 1, t0)
	r.post(t, justBefore)

	r.q.Restart(t)
	// Everything but later is due once Recovery and the retry's backoff
	// have passed; later comes at its ETA.
	wake := t0.Add(max(b.Recovery, b.Backoff(1)))
	if !wake.Before(later.ETA) {
		t.Fatalf("Recovery %v or Backoff(1) %v reaches past the suite's hour", b.Recovery, b.Backoff(1))
	}
	r.deliverAt(t, wake, 2)
	r.deliverAt(t, later.ETA.Add(-time.Nanosecond), 0)
	r.deliverAt(t, later.ETA, 1)
	got := r.deliveries(t)
	if want := names(done, failed, later, justBefore); !slices.Equal(succeeded(got), want) {
		t.Errorf("succeeded %q, want %q", succeeded(got), want)
	}
	r.drained(t)
}
