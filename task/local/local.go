// Package local is the embedded task queue: a dispatcher over the task rows
// of a store/sqlite file. Tasks commit with the store transaction that
// enqueued them; the dispatcher claims rows with a lease shortly before
// they are due, offers each to a task.Preparer as it claims it, runs the
// handler (or what the preparer left) at each one's ETA on a bounded pool
// of workers, deletes what succeeded and hands back what failed, with
// backoff. A task already due when its transaction enqueues it is written
// claimed by the dispatcher (adopted) and starts as soon as the engine
// posts it, without a claim of its own.
//
// Several processes may run dispatchers on one file. Each heartbeats its
// owner row; a claim whose owner stopped heartbeating for OrphanAfter is
// free, so a killed process's tasks are picked up within seconds rather
// than when their lease ends. With a LockDir, an owner's lock file says
// at once that it died, and that it lives and works whatever a step of
// the wall clock does to its rows (liveness.go). Delivery is at least
// once.
package local

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/task/taskrows"
)

// Options tune a Dispatcher. Zero durations and counts take the defaults.
type Options struct {
	// Owner names this dispatcher in its claims. It must be unique per
	// process and per start: a restarted process that reused its old name
	// would look alive to its own stale claims. Default: random.
	Owner string
	// Workers bounds the handlers running at once. Default 2048: a
	// handler spends most of its time waiting for its store commits, and
	// the handlers waiting together are what group commit shares one
	// commit among; with synchronous=FULL, 100,000 every-minute jobs fell
	// behind their 5,000 store transactions a second with 256 (p99
	// lateness 23 s over three minutes) and kept up with 1024 (0.92 s).
	// A worker is held from a tick's transaction through its launch to
	// the outcome's commit, so ticks due together beyond the workers wait
	// for the first ones' outcomes: 100,000 jobs bring 1,667 a second,
	// and with 2048 their p99 fell by a quarter (docs/benchmarks.md,
	// "Dispatcher workers"). Fewer due together start no more handlers
	// whatever the bound.
	// Options.MaxCallsPerProject of the engine bounds what one project
	// may take of them.
	Workers int
	// Lease is how long a claim holds while its owner is alive; a handler
	// still running then may be delivered again elsewhere, so it also
	// bounds the handler's context. The lease is a wall time in the row;
	// the context's bound runs on the monotonic clock. To the other
	// dispatchers, a claim of an owner known alive by its lock file
	// (LockDir) holds past its lease: after a step of the wall clock, the
	// lease says nothing of how long the handler has run. The owner
	// itself takes back what it holds and no longer runs when the lease
	// ends. Default 10 minutes.
	Lease time.Duration
	// OrphanAfter frees the claims of an owner whose last heartbeat is this
	// old. Every process on a file should use the same value, several
	// Heartbeats long. Default 30s.
	OrphanAfter time.Duration
	// Heartbeat is how often the owner row is refreshed. Default 5s.
	Heartbeat time.Duration
	// StopGrace is how long running handlers may go on once Run's ctx is
	// done; then their contexts are cancelled (a command target stops its
	// process) and Run records how they ended. 0 lets each run out its
	// Lease.
	StopGrace time.Duration
	// LockDir, if set, is where Run keeps a file locked for as long as its
	// process lives, counting its heartbeats into it, and where at each
	// heartbeat it looks for the files of dead owners, whose claims it
	// frees at once instead of after OrphanAfter, and of live ones, whose
	// claims it leaves alone whatever their wall-clock leases and
	// heartbeats say (liveness.go). Every process on a database file
	// should use the same LockDir; "" leaves liveness to heartbeats alone.
	LockDir string
	// Ahead is how long before their ETA Run claims tasks, to start each
	// at its ETA from memory: the claim's commit, which queues with every
	// other write to the file, is then behind the task when it falls due
	// instead of in its lateness, and so is what Prepare takes of it. A
	// task claimed ahead takes a worker from its claim on. Default
	// DefaultAhead; negative claims only what is due.
	Ahead time.Duration
	// Prepare, if set, is offered each task as Run claims it ahead of its
	// ETA (task.Preparer); what it leaves runs at the ETA in place of the
	// handler. A task it took something of runs at its ETA even when Run
	// stops before then (within StopGrace); the others are handed back.
	Prepare task.Preparer
	// Poll is the longest the dispatcher sleeps without looking at the
	// table, so tasks enqueued by another process (which cannot wake this
	// one) are seen. Default 1 minute.
	Poll time.Duration
	// A failed task is retried after BackoffMin, doubling with each
	// failure up to BackoffMax. Defaults 1s and 10 minutes.
	BackoffMin, BackoffMax time.Duration
	// Idle, if set, is told each time Run goes to sleep with no task in
	// hand (none running, none claimed ahead) that it will start nothing
	// before until (unless Post brings something due sooner), for work
	// best done between the bursts of launches (internal/idlegc). It must
	// not block.
	Idle func(until time.Time)
	// Now is the clock. Required: nothing here reads the wall clock.
	Now func() time.Time
	// Logger gets handler failures and store errors. Default slog.Default().
	Logger *slog.Logger
}

// DefaultWorkers is Options.Workers' default.
const DefaultWorkers = 2048

// DefaultAhead is Options.Ahead's default. With a Prepare that commits a
// launch ahead (engine.PrepareTask), it is how long before an occurrence
// its launch may be written, and it must cover a burst's way through the
// store's writes: at 100,000 every-minute jobs, the 1,667 launches due at
// the turn of a second take about half a second of commits. With 200 ms
// their p99 lateness was 0.29 s, with 1 s 0.14-0.15 s, with 2 s 0.16 s
// (docs/benchmarks.md, "Launches committed ahead"); the engine prepares
// nothing further ahead than 1 s (engine.MaxAhead).
const DefaultAhead = time.Second

// AheadOf is the Options.Ahead of a flag whose 0 means none.
func AheadOf(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// Dispatcher runs the handler for the task rows of one store. Use either
// Run (a service) or RunDue (a test or the lab's simulator stepping a
// fake clock), not both.
type Dispatcher struct {
	store   taskrows.Rows
	handler task.Handler
	opts    Options
	log     *slog.Logger

	// What Post needs to know to wake Run only when it matters.
	mu        sync.Mutex
	sleeping  bool
	until     time.Time // while sleeping: when Run wakes anyway
	posted    time.Time // while awake: the earliest ETA posted meanwhile
	hasPosted bool
	wake      chan struct{} // a token wakes a sleeping Run
	// The tasks the store wrote claimed by this dispatcher (taskrows.Rows.Adopt):
	// pending until Post names them, then ready to start. A pending one
	// that is never posted (its Update failed after committing, or a
	// simulator lost it) is handed back to be claimed as any other.
	adoption *taskrows.Adoption // Run's, on the clock
	stepped  *taskrows.Adoption // RunDue's, at its step's now
	step     time.Time
	pending  map[string]int // name: the heartbeat generation it came in
	gen      int
	ready    []task.Task
	// lost are the clock readings of the claims and adoptions whose
	// commits ended in taskrows.ErrOutcomeUnknown: the tasks they wrote
	// claimed by this dispatcher, if they committed, are unknown to it,
	// and the next claims recover them (taskrows.Claim.Recover) rather
	// than leave them held until their leases end, a job's next tick
	// among them.
	lost []time.Time

	// Run's, with a LockDir (liveness.go): the heartbeats this owner
	// counted into its file, what it saw of the others' files, and the
	// other owners it knows alive from them, whose claims it spares.
	beats uint64
	watch map[string]watched
	alive []string

	// Run's acknowledgements the store failed to take: kept, and given
	// again with the next claim, so that a task whose outcome is known
	// is not held until its lease ends because one write failed (a
	// database restarting, a connection cut, a busy file).
	unacked unacked

	hooks testHooks
}

// unacked are acknowledgements still to be written.
type unacked struct {
	done    []string
	retry   []taskrows.Retry
	release []string
}

// testHooks are signals for tests. Nil in production.
type testHooks struct {
	sleeping func(until time.Time) // Run is about to sleep until then
	holding  func(t task.Task)     // Run claimed t ahead, and holds it until its ETA
}

var _ task.Queue = (*Dispatcher)(nil)

// New returns a dispatcher of store's task rows that delivers them to
// handler. It panics without opts.Now.
func New(store taskrows.Rows, handler task.Handler, opts Options) *Dispatcher {
	if opts.Now == nil {
		panic("local.New: Options.Now is required")
	}
	if opts.Owner == "" {
		opts.Owner = "local-" + rand.Text()
	}
	defaults := []struct {
		d *time.Duration
		v time.Duration
	}{
		{&opts.Lease, 10 * time.Minute},
		{&opts.OrphanAfter, 30 * time.Second},
		{&opts.Heartbeat, 5 * time.Second},
		{&opts.Poll, time.Minute},
		{&opts.BackoffMin, time.Second},
		{&opts.BackoffMax, 10 * time.Minute},
	}
	for _, def := range defaults {
		if *def.d <= 0 {
			*def.d = def.v
		}
	}
	switch {
	case opts.Ahead == 0:
		opts.Ahead = DefaultAhead
	case opts.Ahead < 0:
		opts.Ahead = 0
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	d := &Dispatcher{
		store:   store,
		handler: handler,
		opts:    opts,
		log:     opts.Logger.With("owner", opts.Owner),
		wake:    make(chan struct{}, 1),
		pending: map[string]int{},
		watch:   map[string]watched{},
	}
	d.adoption = &taskrows.Adoption{Owner: opts.Owner, Lease: opts.Lease, Now: opts.Now, Adopted: d.adopted, Lost: d.lostAt}
	d.stepped = &taskrows.Adoption{Owner: opts.Owner, Lease: opts.Lease, Now: d.stepTime, Adopted: d.adopted, Lost: d.lostAt}
	return d
}

// maxLost bounds the readings kept to recover: past it, the oldest one's
// tasks wait for the end of their leases instead.
const maxLost = 64

// lostAt notes the reading of a claim or an adoption whose answer was
// lost.
func (d *Dispatcher) lostAt(at time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.lost) == maxLost {
		d.lost = d.lost[1:]
	}
	d.lost = append(d.lost, at)
}

// claim makes c, recovering with it the tasks of the claims and adoptions
// whose answers were lost, and notes c's own reading if its answer is.
// The readings are forgotten once a claim recovered all it could: one
// that took fewer than Max.
func (d *Dispatcher) claim(ctx context.Context, c taskrows.Claim) ([]taskrows.Claimed, time.Time, bool, error) {
	if c.Max > 0 {
		d.mu.Lock()
		c.Recover = slices.Clone(d.lost)
		d.mu.Unlock()
	}
	claimed, next, ok, err := d.store.ClaimTasks(ctx, c)
	switch {
	case c.Max > 0 && errors.Is(err, taskrows.ErrOutcomeUnknown):
		d.lostAt(c.Now)
	case err == nil && len(claimed) < c.Max && len(c.Recover) > 0:
		d.mu.Lock()
		d.lost = slices.DeleteFunc(d.lost, func(at time.Time) bool { return slices.ContainsFunc(c.Recover, at.Equal) })
		d.mu.Unlock()
	}
	return claimed, next, ok, err
}

func (d *Dispatcher) stepTime() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.step
}

// adopted notes tasks the store wrote claimed by this dispatcher.
func (d *Dispatcher) adopted(tasks []task.Task) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, t := range tasks {
		d.pending[t.Name()] = d.gen
	}
}

// takeReady returns up to max adopted tasks that were posted, to start.
func (d *Dispatcher) takeReady(max int) []taskrows.Claimed {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := min(max, len(d.ready))
	out := make([]taskrows.Claimed, n)
	for i, t := range d.ready[:n] {
		out[i] = taskrows.Claimed{Task: t}
	}
	d.ready = append(d.ready[:0], d.ready[n:]...)
	return out
}

// unposted forgets the tasks adopted before the last heartbeat and still
// not posted, and returns their names, to hand back: Post follows the
// commit at once, so they never will be. It starts a new generation.
func (d *Dispatcher) unposted() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var names []string
	for name, gen := range d.pending {
		if gen < d.gen {
			names = append(names, name)
			delete(d.pending, name)
		}
	}
	d.gen++
	return names
}

// unstarted forgets every adopted task not started, and returns their
// names, to hand back.
func (d *Dispatcher) unstarted() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var names []string
	for name := range d.pending {
		names = append(names, name)
	}
	for _, t := range d.ready {
		names = append(names, t.Name())
	}
	clear(d.pending)
	d.ready = nil
	return names
}

// release hands back the adopted tasks this dispatcher will not run.
func (d *Dispatcher) release(ctx context.Context, now time.Time, names []string) {
	if len(names) == 0 {
		return
	}
	claim := d.claimOf(now, 0)
	claim.Release = names
	if _, _, _, err := d.store.ClaimTasks(ctx, claim); err != nil {
		// Handed back with the next claim, or at the end of their lease.
		d.log.Error("task/local: handing back adopted tasks", "err", err)
		d.unacked.release = append(d.unacked.release, names...)
	}
}

// Post makes the adopted ones of tasks ready to start, and wakes Run if
// one of them is, or if one of the others is to be claimed (Ahead of its
// ETA) before Run would wake anyway. The tasks are already rows: the
// transaction that enqueued them committed. It never fails.
func (d *Dispatcher) Post(_ context.Context, tasks []task.Task) error {
	if len(tasks) == 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var earliest time.Time
	for i, t := range tasks {
		eta := t.ETA.Add(-d.opts.Ahead)
		if _, ok := d.pending[t.Name()]; ok {
			// Adopted: Run starts it at once.
			delete(d.pending, t.Name())
			d.ready = append(d.ready, t)
			eta = time.Time{}
		}
		if i == 0 || eta.Before(earliest) {
			earliest = eta
		}
	}
	d.wakeBy(earliest)
	return nil
}

// Wake tells Run that a task due at eta was enqueued where its Posts do
// not reach (another process on the same rows), so that it looks at the
// rows by then rather than at its next Poll.
func (d *Dispatcher) Wake(eta time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.wakeBy(eta.Add(-d.opts.Ahead))
}

// wakeBy makes Run look at the rows by earliest. d.mu is held.
func (d *Dispatcher) wakeBy(earliest time.Time) {
	switch {
	case d.sleeping:
		if earliest.Before(d.until) {
			select {
			case d.wake <- struct{}{}:
			default:
			}
		}
	case !d.hasPosted || earliest.Before(d.posted):
		// Run is between looking at the table and sleeping: it may have
		// looked before this commit, so it folds this in before it sleeps.
		d.posted, d.hasPosted = earliest, true
	}
}

// sleep records that Run sleeps until until (or the earliest task posted
// while it was awake) and returns when it will wake.
func (d *Dispatcher) sleep(until time.Time) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.hasPosted && d.posted.Before(until) {
		until = d.posted
	}
	d.hasPosted = false
	d.sleeping, d.until = true, until
	if d.hooks.sleeping != nil {
		d.hooks.sleeping(until)
	}
	return until
}

func (d *Dispatcher) awake() {
	d.mu.Lock()
	d.sleeping = false
	d.mu.Unlock()
}

// Run dispatches until ctx is done: it heartbeats, claims due tasks for the
// free workers, runs them, and sleeps until the next task is due, a worker
// finishes, Post wakes it, or Poll passes. When ctx is done it claims no
// more, waits for the running handlers, records their outcomes, and
// returns nil.
//
// Handlers do not see ctx's cancellation at once: an interrupted launch
// would be an ambiguous one. Each gets StopGrace to finish (Lease if 0).
func (d *Dispatcher) Run(ctx context.Context) error {
	// Heartbeats and acks outlive ctx: the running handlers' tasks must
	// not look orphaned, and their outcomes must be recorded.
	bg := context.WithoutCancel(ctx)
	hctx, stopHandlers := context.WithCancelCause(bg)
	defer stopHandlers(nil)
	out := make(chan outcome, d.opts.Workers)
	inflight := map[string]bool{}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	done := ctx.Done()
	var lock *os.File
	if d.opts.LockDir != "" {
		var err error
		if lock, err = lockOwner(d.opts.LockDir, d.opts.Owner); err != nil {
			return fmt.Errorf("task/local: lock %s: %w", d.opts.LockDir, err)
		}
		defer func() {
			os.Remove(lock.Name())
			lock.Close()
		}()
	}
	d.store.Adopt(d.adoption)
	defer d.store.Adopt(nil)
	var nextBeat time.Time
	for {
		now := d.opts.Now()
		if !now.Before(nextBeat) {
			if err := d.store.Heartbeat(bg, d.opts.Owner, now, d.opts.OrphanAfter); err != nil {
				d.log.Error("task/local: heartbeat", "err", err)
			}
			d.release(bg, now, d.unposted())
			if lock != nil {
				if err := d.beat(lock); err != nil {
					d.log.Error("task/local: counting a heartbeat into the lock file", "err", err)
				}
				if err := d.reapDead(bg); err != nil {
					d.log.Error("task/local: looking for dead owners", "err", err)
				}
			}
			nextBeat = now.Add(d.opts.Heartbeat)
		}
		wakeAt := now.Add(d.opts.Poll)
		if ctx.Err() != nil {
			if len(inflight) == 0 {
				d.release(bg, now, append(d.unacked.release, d.unstarted()...))
				if u := d.unacked; len(u.done) > 0 || len(u.retry) > 0 {
					if err := d.store.AckTasks(bg, d.opts.Owner, u.done, u.retry); err != nil {
						d.log.Error("task/local: ack", "err", err)
					}
				}
				return nil
			}
		} else {
			if free := d.opts.Workers - len(inflight); free > 0 {
				if free -= d.start(hctx, d.takeReady(free), inflight, out); free > 0 {
					wakeAt = d.fill(ctx, hctx, now, free, wakeAt, inflight, out)
				}
			}
		}
		if nextBeat.Before(wakeAt) {
			wakeAt = nextBeat
		}
		wakeAt = d.sleep(wakeAt)
		if d.opts.Idle != nil && len(inflight) == 0 {
			d.opts.Idle(wakeAt)
		}
		timer.Reset(wakeAt.Sub(d.opts.Now()))
		select {
		case o := <-out:
			outs := []outcome{o}
			for more := true; more; {
				select {
				case o := <-out:
					outs = append(outs, o)
				default:
					more = false
				}
			}
			d.ack(bg, d.opts.Now(), outs, inflight)
		case <-d.wake:
		case <-timer.C:
		case <-done:
			// Stop selecting on it: from now on only handlers and
			// heartbeats wake the loop. The tasks enqueued meanwhile are
			// left to be claimed.
			done = nil
			d.store.Adopt(nil)
			if d.opts.StopGrace > 0 {
				stop := time.AfterFunc(d.opts.StopGrace, func() { stopHandlers(task.ErrStopping) })
				defer stop.Stop()
			}
		}
		d.awake()
	}
}

// fill claims up to free due tasks and starts them, and returns when Run
// should look again: wakeAt, or earlier if a task becomes due before.
func (d *Dispatcher) fill(ctx, hctx context.Context, now time.Time, free int, wakeAt time.Time, inflight map[string]bool, out chan outcome) time.Time {
	retry := now.Add(d.opts.BackoffMin)
	claim := d.claimOf(now, free)
	claim.Ahead = d.opts.Ahead
	claim.Done, claim.Retry, claim.Release = d.unacked.done, d.unacked.retry, d.unacked.release
	claimed, next, ok, err := d.claim(ctx, claim)
	if err != nil {
		if ctx.Err() == nil {
			d.log.Error("task/local: claim", "err", err)
		}
		return earlier(wakeAt, retry)
	}
	d.unacked = unacked{}
	d.start(hctx, d.hold(hctx, ctx.Done(), now, claimed, inflight, out), inflight, out)
	if len(inflight) == d.opts.Workers {
		// A finishing worker wakes Run; what is due can wait for it.
		return wakeAt
	}
	if len(claimed) == free {
		// A full claim does not say when the next task is due, and
		// workers are still free: some of what it claimed was already
		// running here (a lease that ran out, claimed again).
		next, ok, err = d.store.NextDue(ctx, d.opts.OrphanAfter, d.alive...)
	}
	switch {
	case err != nil:
		if ctx.Err() == nil {
			d.log.Error("task/local: next due", "err", err)
		}
		return earlier(wakeAt, retry)
	case ok:
		if ahead := next.Add(-d.opts.Ahead); ahead.After(now) {
			return earlier(wakeAt, ahead)
		}
		// Due within Ahead yet not claimed: held by another owner, whose
		// claim is free at next.
		return earlier(wakeAt, next)
	}
	return wakeAt
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// RunDue is one synchronous step on a fake clock: it heartbeats at now
// (its first claim does), claims and runs (on the worker pool) everything
// due at now, including tasks those handlers enqueue due at now, records
// the outcomes, and returns how many tasks it ran and when the next task
// is due (ok false if there is none). Handlers get ctx as it is.
//
// No server calls it. It is how the tests that run the embedded shape on
// a fake clock (enginetest.RunUntil, this package's suites) and the lab's
// simulator step the dispatcher: Run waits on the wall clock's timers and
// returns only when stopped, where they must know that everything due at
// one time has run and been recorded before they move the clock. It is not
// a second dispatcher: the claims, the starts on the worker pool and the
// adoption are Run's own (ClaimTasks, start, takeReady); only the loop
// around them differs. It must be exported for those tests, which live in
// other packages.
//
// An adopted task starts as soon as it is posted, as under Run, not when
// the tasks started with it have all returned: the launches of a step's
// ticks then share commits with the ticks still running, instead of each
// round ending in commits of one straggler each.
func (d *Dispatcher) RunDue(ctx context.Context, now time.Time) (handled int, next time.Time, ok bool, err error) {
	d.mu.Lock()
	d.step = now
	d.mu.Unlock()
	d.store.Adopt(d.stepped)
	out := make(chan outcome, d.opts.Workers)
	inflight := map[string]bool{}
	var outs []outcome
	for {
		d.start(ctx, d.takeReady(d.opts.Workers-len(inflight)), inflight, out)
		if len(inflight) == 0 {
			// Nothing runs, so nothing can be posted any more. The claim
			// acknowledges what ran, in its transaction, and hands back
			// the adopted tasks that were not posted: they never will be.
			claim := d.claimOf(now, d.opts.Workers)
			var back []string
			claim.Done, claim.Retry, back = d.settle(now, outs, inflight)
			claim.Release = append(d.unstarted(), back...)
			outs = outs[:0]
			batch, next, ok, err := d.claim(ctx, claim)
			if err != nil || len(batch) == 0 {
				return handled, next, ok, err
			}
			d.start(ctx, batch, inflight, out)
			continue
		}
		// Post wakes the step when it makes a task due at now ready (an
		// adopted one); one posted since takeReady above makes sleep
		// return at once. Tasks due later wake nothing.
		if after := now.Add(time.Nanosecond); d.sleep(after).Before(after) {
			d.awake()
			continue
		}
		select {
		case o := <-out:
			outs = append(outs, o)
			delete(inflight, o.claimed.Name())
			handled++
		case <-d.wake:
		}
		d.awake()
	}
}

// outcome is what a handler made of a claimed task.
type outcome struct {
	claimed taskrows.Claimed
	err     error
	// handBack: the task was claimed ahead, nothing was prepared of it,
	// and Run stopped before its ETA.
	handBack bool
}

func (d *Dispatcher) claimOf(now time.Time, max int) taskrows.Claim {
	return taskrows.Claim{Owner: d.opts.Owner, Now: now, Max: max, Lease: d.opts.Lease, OrphanAfter: d.opts.OrphanAfter, Alive: d.alive}
}

// start runs the handler of each claimed task on its own goroutine, and
// returns how many it started; the claim's size bounds them. A task
// already running or kept here (its lease ran out and this owner claimed
// it again) is not started twice: the running handler's outcome settles
// the renewed claim.
func (d *Dispatcher) start(ctx context.Context, claimed []taskrows.Claimed, inflight map[string]bool, out chan<- outcome) int {
	n := 0
	for _, c := range claimed {
		name := c.Name()
		if inflight[name] {
			continue
		}
		inflight[name] = true
		n++
		d.run(ctx, c, out)
	}
	return n
}

// hold starts a holder for each claimed task not due at now, claimed
// ahead, and returns the others.
func (d *Dispatcher) hold(ctx context.Context, stop <-chan struct{}, now time.Time, claimed []taskrows.Claimed, inflight map[string]bool, out chan<- outcome) []taskrows.Claimed {
	var due []taskrows.Claimed
	for _, c := range claimed {
		switch {
		case !c.ETA.After(now):
			due = append(due, c)
		case !inflight[c.Name()]:
			inflight[c.Name()] = true
			d.holder(ctx, stop, c, out)
		}
	}
	return due
}

// holder holds c, claimed ahead of its ETA, on its own goroutine: it
// offers c to Options.Prepare at once, then runs the handler, or what
// Prepare left, at the ETA. If Run stops (stop) before then, a task
// nothing was prepared of is handed back; one prepared waits for its ETA
// as a running handler would, unless ctx ends first.
func (d *Dispatcher) holder(ctx context.Context, stop <-chan struct{}, c taskrows.Claimed, out chan<- outcome) {
	if d.hooks.holding != nil {
		d.hooks.holding(c.Task)
	}
	go func() {
		// The claim holds from the ETA for a Lease (taskrows.Claim.Ahead).
		hctx, cancel := context.WithDeadline(ctx, c.ETA.Add(d.opts.Lease))
		defer cancel()
		rest, prepared := d.handler, false
		if d.opts.Prepare != nil {
			var err error
			if rest, prepared, err = d.prepare(hctx, c.Task); err != nil {
				out <- outcome{claimed: c, err: err}
				return
			}
			if !prepared {
				rest = d.handler
			}
		}
		timer := time.NewTimer(c.ETA.Sub(d.opts.Now()))
		defer timer.Stop()
		if !prepared {
			select {
			case <-timer.C:
			case <-stop:
				out <- outcome{claimed: c, handBack: true}
				return
			}
		} else {
			select {
			case <-timer.C:
			case <-hctx.Done():
				out <- outcome{claimed: c, err: context.Cause(hctx)}
				return
			}
		}
		out <- outcome{claimed: c, err: d.handle(hctx, rest, c.Task)}
	}()
}

// prepare runs Options.Prepare, turning a panic into a failure.
func (d *Dispatcher) prepare(ctx context.Context, t task.Task) (rest task.Handler, ok bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("preparing panicked: %v", p)
		}
	}()
	rest, ok = d.opts.Prepare(ctx, t)
	return rest, ok, nil
}

// run runs the handler of c on its own goroutine.
func (d *Dispatcher) run(ctx context.Context, c taskrows.Claimed, out chan<- outcome) {
	go func() {
		hctx, cancel := context.WithTimeout(ctx, d.opts.Lease)
		defer cancel()
		out <- outcome{claimed: c, err: d.handle(hctx, d.handler, c.Task)}
	}()
}

// handle runs the handler, turning a panic into a failure so that one bad
// task costs a retry, not the process.
func (d *Dispatcher) handle(ctx context.Context, h task.Handler, t task.Task) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panicked: %v", p)
		}
	}()
	return h(ctx, t)
}

// ack deletes the tasks that succeeded and hands back those that failed,
// with backoff, in one transaction, and those a stop handed back, in
// another.
func (d *Dispatcher) ack(ctx context.Context, now time.Time, outs []outcome, inflight map[string]bool) {
	done, retry, back := d.settle(now, outs, inflight)
	done, retry = append(d.unacked.done, done...), append(d.unacked.retry, retry...)
	d.unacked.done, d.unacked.retry = nil, nil
	if len(done) > 0 || len(retry) > 0 {
		if err := d.store.AckTasks(store.Deferrable(ctx), d.opts.Owner, done, retry); err != nil {
			// Written with the next claim, or, if the process ends
			// first, the claims' leases end and the tasks come again.
			d.log.Error("task/local: ack", "err", err)
			d.unacked.done, d.unacked.retry = done, retry
		}
	}
	d.release(ctx, now, back)
}

// settle sorts outs into the tasks to delete, those to hand back with
// backoff, and those to hand back as they are, and forgets them as in
// flight.
func (d *Dispatcher) settle(now time.Time, outs []outcome, inflight map[string]bool) (done []string, retry []taskrows.Retry, back []string) {
	for _, o := range outs {
		name := o.claimed.Name()
		delete(inflight, name)
		if o.handBack {
			back = append(back, name)
			continue
		}
		if o.err == nil {
			done = append(done, name)
			continue
		}
		eta := now.Add(d.backoff(o.claimed.Failures + 1))
		level, msg := slog.LevelWarn, "task/local: task failed"
		switch {
		case errors.Is(o.err, task.ErrRetryLater):
			level = slog.LevelDebug
		case errors.Is(o.err, task.ErrStopping):
			// A clean stop, not the task's trouble: it comes again at the
			// next start.
			level, msg = slog.LevelInfo, "task/local: task stopped with the server"
		}
		d.log.Log(context.Background(), level, msg, "task", o.claimed.Task.String(), "failures", o.claimed.Failures+1, "retry_at", eta, "err", o.err)
		retry = append(retry, taskrows.Retry{Name: name, ETA: eta})
	}
	return done, retry, back
}

// backoff is the wait after the failures-th failure in a row.
func (d *Dispatcher) backoff(failures int) time.Duration {
	wait := d.opts.BackoffMin
	for i := 1; i < failures && wait < d.opts.BackoffMax; i++ {
		wait *= 2
	}
	return min(wait, d.opts.BackoffMax)
}
