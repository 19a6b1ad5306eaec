// Package simulate runs the real engine on a real store and task queue, on
// a simulated clock, for many jobs over simulated days, with faults
// injected: store commits that fail (before or after committing), lost
// tasks, tasks delivered twice and late, processes dying between LAUNCHING
// and the recorded outcome, the whole queue purged, downtime, clock
// jumps, and steps of the host's clock back and forward. It runs either
// shape: the embedded one (the SQLite store and task/local's dispatcher)
// or the cloud one (the Datastore store on the emulator and a queue that
// behaves as Cloud Tasks does). It then checks the guarantees of
// DESIGN.md from what the targets saw and what the store recorded: no
// occurrence launched twice, no job stuck past one watchdog period plus
// grace, every due occurrence run or recorded as skipped with a reason.
package simulate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/task"
	"github.com/sundial-cron/sundial/watchdog"
)

// Options say what to simulate.
type Options struct {
	Jobs   int
	Days   int
	Seed   uint64
	Faults string // a name from Levels
	// Backend is "sqlite" (also for "") or "datastore".
	Backend string
	// Dir holds the SQLite database file; "" makes a temporary directory
	// and removes it afterwards.
	Dir string
	// DatastoreEmulator is the host:port of the Datastore emulator the
	// datastore backend runs on; it never connects to a real database.
	DatastoreEmulator string
	// WallClock measures the run's wall time; nil leaves it out.
	WallClock func() time.Time
}

// Report is what a run found. DoubleLaunches, StuckJobs and Unaccounted
// must be 0.
type Report struct {
	Backend string `json:"backend"`
	Jobs    int    `json:"jobs"`
	Days    int    `json:"days"`
	Seed    uint64 `json:"seed"`
	Faults  string `json:"faults"`

	// Occurrences due in the simulated days by the schedules of the jobs
	// with fixed fire times, counted from the schedules alone.
	OccurrencesDue int `json:"occurrences_due"`
	// Of those, how many the store has no invocation or skip record for.
	Unaccounted int `json:"unaccounted"`
	// Invocations by final status (all jobs, manual runs included).
	Invocations map[string]int `json:"invocations"`
	// InvocationsLaunched: invocations whose target saw at least one launch.
	InvocationsLaunched int `json:"invocations_launched"`
	// Launches: attempts the targets saw.
	Launches int `json:"launches"`
	// Skipped occurrences up to the end, by reason, from the store's records.
	Skipped map[string]int `json:"skipped"`

	DoubleLaunches int `json:"double_launches"`
	// IdempotentRelaunches: second launches of one attempt of a job that
	// declares its target idempotent, after an unknown outcome. Allowed.
	IdempotentRelaunches int `json:"idempotent_relaunches"`
	// StuckJobs: jobs whose WatchdogTimerTs stayed passed for longer than
	// one watchdog period plus grace while the process was up.
	StuckJobs int `json:"stuck_jobs"`
	// Stuck names the first stuck jobs, each with its timeline.
	Stuck []StuckJob `json:"stuck,omitempty"`
	// MaxRepairDelaySeconds: the longest a job waited past its
	// WatchdogTimerTs (or past a restart) before a watchdog pass saw it.
	MaxRepairDelaySeconds float64 `json:"max_repair_delay_s"`
	WatchdogRepairs       int     `json:"watchdog_repairs"`
	// RepairsRefused: the times a watchdog pass gave up on a job because
	// the injected store faults refused each of its attempts. For that job
	// the pass counts as a restart: its wait counts from then, as the
	// store accepted nothing the watchdog could have done.
	RepairsRefused int `json:"repairs_refused"`

	FaultsInjected map[string]int `json:"faults_injected"`
	// Deliveries: tasks the dispatcher delivered, by kind, and how many of
	// those the handler failed (to be delivered again).
	Deliveries map[string]int `json:"deliveries"`
	// StoreUpdates and StoreCommits: job transactions and the physical
	// commits they shared (group commit).
	StoreUpdates uint64 `json:"store_updates"`
	StoreCommits uint64 `json:"store_commits"`
	// DatastoreReads and DatastoreWrites: the entities the datastore
	// backend read and wrote, as billed; the reads include the
	// simulator's own, for its checks.
	DatastoreReads  int64   `json:"datastore_reads,omitempty"`
	DatastoreWrites int64   `json:"datastore_writes,omitempty"`
	WallSeconds     float64 `json:"wall_time_s,omitempty"`
}

// The watchdog runs every minute; a job is stuck when its timer passed more
// than a period plus this grace ago.
const (
	watchdogPeriod = time.Minute
	watchdogGrace  = 30 * time.Second
	orphanAfter    = 10 * time.Second
	// step is how far the clock moves at least. A task runs up to a step
	// late; 30 s steps (statemachine's TaskGrace) let the watchdog take a
	// task merely waiting for the step for a lost one, and jobs came out
	// stuck now and then, so steps stay well inside the grace.
	step = 15 * time.Second
	// workers is how many tasks, and how many agenda events, run at once:
	// a step of 2,000 jobs claims a few dozen, and a round that takes
	// them all commits once instead of once per 16.
	workers = 64
)

// start is the first simulated instant: 19 hours before New York springs
// forward, so that every run crosses a DST gap.
var start = time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)

type sim struct {
	ctx  context.Context
	rng  *lockedRand
	now  time.Time
	skew time.Duration // the process clock's error, changed by clock jumps and steps
	// stepped is where the clock steps left the process's clock; the
	// jumps wobble it around there.
	stepped time.Duration
	up      time.Time // when the process last started
	faults  faults
	// injecting is false while the run drains, so the end state is checked
	// without new faults.
	injecting bool

	be     backend
	store  store.Store
	engine *engine.Engine
	wd     *watchdog.Watchdog
	// mu guards what the dispatcher's workers touch: the agenda and the
	// report's counters.
	mu     sync.Mutex
	agenda events
	seq    int

	jobs         []simJob
	byID         map[string]*simJob
	launchedKeys map[string]bool // invocation keys that saw a launch
	stuck        map[string]bool
	// refused: the jobs whose last repair in the current pass the injected
	// faults refused; refusedAt: since when, on the process's clock, each
	// job's wait counts because of such a pass.
	refused   map[string]bool
	refusedAt map[string]time.Time
	timelines timelines
	rep       Report
}

type simJob struct {
	id         string
	def        engine.Definition
	idempotent bool // blind target and declared idempotent
	fixed      bool // fire times come from the schedule alone
}

// ErrBadOptions wraps the errors of options Run cannot simulate.
var ErrBadOptions = errors.New("bad options")

// OK reports whether the run kept every guarantee it checks.
func (r Report) OK() bool {
	return r.DoubleLaunches == 0 && r.StuckJobs == 0 && r.Unaccounted == 0
}

// Run simulates and reports.
func Run(ctx context.Context, opts Options) (Report, error) {
	f, ok := levels[opts.Faults]
	if !ok {
		return Report{}, fmt.Errorf("%w: unknown fault level %q; want none, default or heavy", ErrBadOptions, opts.Faults)
	}
	if opts.Jobs <= 0 || opts.Days <= 0 {
		return Report{}, fmt.Errorf("%w: jobs and days must be positive", ErrBadOptions)
	}
	if opts.Backend == "" {
		opts.Backend = "sqlite"
	}
	switch {
	case opts.Backend != "sqlite" && opts.Backend != "datastore":
		return Report{}, fmt.Errorf("%w: unknown backend %q; want sqlite or datastore", ErrBadOptions, opts.Backend)
	case opts.Backend == "datastore" && opts.DatastoreEmulator == "":
		return Report{}, fmt.Errorf("%w: the datastore backend needs the Datastore emulator's host:port", ErrBadOptions)
	}
	var began time.Time
	if opts.WallClock != nil {
		began = opts.WallClock()
	}
	s := &sim{
		ctx: ctx, rng: &lockedRand{r: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x5eed))},
		now: start, up: start, faults: f, injecting: true,
		byID: map[string]*simJob{}, launchedKeys: map[string]bool{}, stuck: map[string]bool{},
		refused: map[string]bool{}, refusedAt: map[string]time.Time{},
		rep: Report{
			Backend: opts.Backend, Jobs: opts.Jobs, Days: opts.Days, Seed: opts.Seed, Faults: opts.Faults,
			Invocations: map[string]int{}, Skipped: map[string]int{}, FaultsInjected: map[string]int{}, Deliveries: map[string]int{},
		},
	}
	if opts.Backend == "datastore" {
		be, err := openDatastore(ctx, s, opts.DatastoreEmulator)
		if err != nil {
			return Report{}, err
		}
		s.be = be
	} else {
		dir := opts.Dir
		if dir == "" {
			tmp, err := os.MkdirTemp("", "sundial-simulate-")
			if err != nil {
				return Report{}, err
			}
			defer os.RemoveAll(tmp)
			dir = tmp
		}
		be, err := openSQLite(s, dir)
		if err != nil {
			return Report{}, err
		}
		s.be = be
	}
	defer s.be.close()
	s.build()
	if err := s.run(opts.Jobs, opts.Days); err != nil {
		return s.rep, err
	}
	s.be.report(&s.rep)
	if opts.WallClock != nil {
		s.rep.WallSeconds = opts.WallClock().Sub(began).Seconds()
	}
	return s.rep, nil
}

// build wires the real engine, task queue and watchdog to the simulated
// clock and the fault injectors.
func (s *sim) build() {
	tgt := newSimTarget(s)
	targets := map[string]targets.Target{"sim": tgt, "blind": blindTarget{tgt}}
	s.store = s.be.store()
	q := lossyQueue{inner: s.be.queue(s.deliver), sim: s}
	s.engine = engine.New(faultyStore{Store: s.store, sim: s}, q, targets, engine.Options{
		Now:      s.clock,
		NewNonce: func() int64 { return s.rng.Int64N(1<<62) + 1 },
		Observer: observer{s},
		// A failed write is tried again at once: the simulated clock
		// moves only between the loop's steps.
		Wait: func(context.Context, time.Duration) error { return nil },
	})
	s.wd = watchdog.New(s.store, watchedRepairer{s}, watchdog.Options{Now: s.clock})
}

// deliver hands a task to the engine, and sometimes keeps a copy to deliver
// again later.
func (s *sim) deliver(ctx context.Context, t task.Task) error {
	err := s.deliver1(ctx, t)
	k := string(t.Kind)
	if err != nil {
		k += " failed"
		s.note(t.JobID, "delivered %s: failed: %v", t, err)
	} else {
		s.note(t.JobID, "delivered %s: ok", t)
	}
	s.mu.Lock()
	s.rep.Deliveries[k]++
	s.mu.Unlock()
	return err
}

func (s *sim) deliver1(ctx context.Context, t task.Task) error {
	if s.injecting && s.rng.Float64() < s.faults.Duplicate {
		s.count("task_duplicated")
		late := time.Duration(s.rng.Int64N(int64(2 * time.Hour)))
		s.note(t.JobID, "injected: %s to be delivered again in %v", t, late.Round(time.Second))
		s.at(s.now.Add(late), func() {
			ctx, end := inProcess(s.ctx)
			defer end()
			err := s.engine.HandleTask(ctx, t)
			s.note(t.JobID, "delivered %s again: %v", t, errOrOK(err))
		})
	}
	ctx, end := inProcess(ctx)
	defer end()
	return s.engine.HandleTask(ctx, t)
}

func errOrOK(err error) string {
	if err != nil {
		return "failed: " + err.Error()
	}
	return "ok"
}

// lockedRand is the run's one source of randomness, shared by the
// dispatcher's workers. The seed fixes the jobs and the plan of faults;
// which concurrent handler draws first may differ between runs.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (l *lockedRand) Float64() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Float64()
}

func (l *lockedRand) Int64N(n int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Int64N(n)
}

func (l *lockedRand) IntN(n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.IntN(n)
}

// clock is the process's clock: the simulated time, off by the skew.
func (s *sim) clock() time.Time { return s.now.Add(s.skew) }

// moveClock moves the process's clock by d while the process runs, as a
// jump or a step of the host's clock does. The instants the checks keep
// on that clock (the last start, the refused repairs) move with it: the
// watchdog's wait is judged by the clock as it reads after the move. A
// move forward makes every timer it passes over due at once, so the
// watchdog's period counts from the move, as from a restart; after a move
// back, a timer set before it passes that much later, by the clock.
func (s *sim) moveClock(d time.Duration) {
	s.skew += d
	s.up = s.up.Add(d)
	for id, at := range s.refusedAt {
		s.refusedAt[id] = at.Add(d)
	}
	if d > 0 {
		s.up = later(s.up, s.clock())
	}
}

// clockStep draws a step of the host's clock: back or forward, by seconds,
// by minutes, or by an hour or more (a VM resumed from an old snapshot).
func (s *sim) clockStep() time.Duration {
	unit := []time.Duration{time.Second, time.Minute, time.Hour}[s.rng.IntN(3)]
	d := unit + time.Duration(s.rng.Int64N(int64(59*unit)))
	if unit == time.Hour {
		d = unit + time.Duration(s.rng.Int64N(int64(unit)))
	}
	if s.rng.IntN(2) == 0 {
		return -d
	}
	return d
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (s *sim) at(t time.Time, fn func()) { s.add(event{at: t, fn: fn}) }

// atAlone puts on the agenda an event that must not run alongside others.
func (s *sim) atAlone(t time.Time, fn func()) { s.add(event{at: t, fn: fn, alone: true}) }

func (s *sim) add(ev event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	ev.seq = s.seq
	s.agenda.add(ev)
}

// runDue runs the agenda's events due at s.now, including those they add
// for now, and reports whether there were any. Events run concurrently, at
// most workers at a time, so that their store transactions share commits
// as a busy process's would (one at a time, each target's report was a
// commit of its own: most of a run's commits); an alone event waits for
// those before it, and those after it wait for it.
func (s *sim) runDue() bool {
	ran := false
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for {
		s.mu.Lock()
		ev, ok := s.agenda.popDue(s.now)
		s.mu.Unlock()
		if !ok {
			// Running events may still add some for now.
			wg.Wait()
			s.mu.Lock()
			at, more := s.agenda.next()
			s.mu.Unlock()
			if !more || at.After(s.now) {
				return ran
			}
			continue
		}
		ran = true
		if ev.alone {
			wg.Wait()
			ev.fn()
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			ev.fn()
		})
	}
}

func (s *sim) count(fault string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rep.FaultsInjected[fault]++
}

func (s *sim) launched(req targets.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rep.Launches++
	s.launchedKeys[req.Key] = true
}

func (s *sim) doubleLaunch(req targets.Request, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j := s.byID[req.JobID]; j != nil && j.idempotent {
		s.rep.IdempotentRelaunches++
		return
	}
	s.rep.DoubleLaunches++
}

// observer counts what the engine reports.
type observer struct{ s *sim }

func (o observer) Launched(string, time.Duration)    {}
func (o observer) Ended(string, statemachine.Status) {}
func (o observer) Repaired(string) {
	o.s.mu.Lock()
	defer o.s.mu.Unlock()
	o.s.rep.WatchdogRepairs++
}
func (o observer) Skipped(string, statemachine.SkipReason, int) {}
func (o observer) Disabled(string, statemachine.Reason)         {}
func (o observer) TaskFailed(string, task.Kind, bool)           {}

// run defines the jobs, simulates the days with faults, drains without
// faults, and checks.
func (s *sim) run(jobs, days int) error {
	end := start.Add(time.Duration(days) * 24 * time.Hour)
	for i := range jobs {
		j := s.newJob(i)
		s.jobs = append(s.jobs, j)
	}
	for i := range s.jobs {
		j := &s.jobs[i]
		s.byID[j.id] = j
		// A failed commit is retried, as the next config refresh would.
		var err error
		for range 10 {
			ctx, end := inProcess(s.ctx)
			err = s.engine.Define(ctx, j.id, j.def)
			end()
			if !errors.Is(err, errInjected) {
				break
			}
		}
		if err != nil {
			return fmt.Errorf("defining %s: %w", j.id, err)
		}
	}
	s.plan(end)
	if err := s.loop(end); err != nil {
		return err
	}
	// Drain: no new faults; long enough for every occurrence up to the end
	// to be run or recorded, counted from the end or from a restart that a
	// downtime pushed past it. The clock comes back to the true time, a
	// step too; the watchdog's period counts from here.
	s.injecting = false
	s.stepped = 0
	s.moveClock(-s.skew)
	s.up = later(s.up, s.clock())
	s.timelines.noteProcess(s.now, s.skew, "draining: no more faults")
	if err := s.loop(later(s.now, end).Add(30 * time.Minute)); err != nil {
		return err
	}
	return s.check(end)
}

// plan puts the admin actions and the whole-process faults on the agenda.
func (s *sim) plan(end time.Time) {
	for _, t := range s.spread(s.faults.Purges, start, end) {
		s.atAlone(t, func() {
			s.count("queue_purged")
			s.timelines.noteProcess(s.now, s.skew, "every task purged")
			_ = s.be.purge(s.ctx)
		})
	}
	for _, t := range s.spread(s.faults.Downtimes, start, end) {
		s.atAlone(t, func() {
			s.count("downtime")
			from := s.now
			s.now = s.now.Add(5*time.Minute + time.Duration(s.rng.Int64N(int64(115*time.Minute))))
			s.be.down(from, s.now)
			s.up = s.clock()
			s.timelines.noteProcess(from, s.skew, "down until %s", s.now.UTC().Format("15:04:05"))
		})
	}
	for _, t := range s.spread(s.faults.ClockJumps, start, end) {
		s.atAlone(t, func() {
			s.count("clock_jump")
			most := s.be.maxSkew()
			s.moveClock(s.stepped + time.Duration(s.rng.Int64N(int64(2*most))) - most - s.skew)
			s.timelines.noteProcess(s.now, s.skew, "the clock jumped")
		})
	}
	if s.be.clockSteps() {
		for _, t := range s.spread(s.faults.ClockSteps, start, end) {
			s.atAlone(t, func() {
				s.count("clock_step")
				d := s.clockStep()
				s.stepped += d
				s.moveClock(d)
				s.timelines.noteProcess(s.now, s.skew, "the clock stepped %+v", d)
			})
		}
	}
	// Admins: a few manual triggers and pauses a day across all jobs.
	perDay := max(1, len(s.jobs)/50)
	for _, t := range s.spread(perDay, start, end) {
		j := s.jobs[s.rng.IntN(len(s.jobs))].id
		s.at(t, func() {
			ctx, end := inProcess(s.ctx)
			defer end()
			_, err := s.engine.Trigger(ctx, j, "serviceAccount:simulator@sundial.invalid")
			s.note(j, "triggered by hand: %s", errOrOK(err))
		})
	}
	for _, t := range s.spread(perDay, start, end) {
		j := s.jobs[s.rng.IntN(len(s.jobs))].id
		s.at(t, func() {
			ctx, end := inProcess(s.ctx)
			defer end()
			err := s.engine.Pause(ctx, j, "serviceAccount:simulator@sundial.invalid", "simulated admin")
			s.note(j, "paused by hand: %s", errOrOK(err))
		})
		s.at(t.Add(10*time.Minute+time.Duration(s.rng.Int64N(int64(3*time.Hour)))), func() {
			ctx, end := inProcess(s.ctx)
			defer end()
			err := s.engine.Resume(ctx, j, "serviceAccount:simulator@sundial.invalid")
			s.note(j, "resumed by hand: %s", errOrOK(err))
		})
	}
}

// loop advances the simulated clock from event to event until `until`: due
// tasks, agenda events, and a watchdog pass every minute. The engine runs
// on the process clock (skew included); the agenda on the true simulated
// time; the queue on either, as its backend says.
func (s *sim) loop(until time.Time) error {
	nextPass := s.now.Truncate(watchdogPeriod).Add(watchdogPeriod)
	// due is when the next task is due, on the true time. Only the
	// queue's handlers, the agenda and the watchdog enqueue tasks, and
	// each of them refreshes it.
	due, dueOK, err := s.be.nextDue(s.ctx)
	if err != nil {
		return err
	}
	for s.now.Before(until) {
		t := nextPass
		s.mu.Lock()
		at, ok := s.agenda.next()
		s.mu.Unlock()
		if ok && at.Before(t) {
			t = at
		}
		if dueOK && due.Before(t) {
			t = due
		}
		// Time moves in steps of a few seconds, so that the dispatcher
		// handles the tasks of a step in one batch (one claim, one
		// acknowledgement) as a busy process would; tasks run at most a
		// step late, well inside every grace the engine gives.
		if t = t.Add(step - 1).Truncate(step); t.After(s.now) {
			s.now = t
		}
		ran := s.runDue()
		if ran || (dueOK && !due.After(s.now)) {
			if due, dueOK, err = s.be.runDue(s.ctx); err != nil {
				return err
			}
		}
		if !s.now.Before(nextPass) {
			if err := s.pass(); err != nil {
				return err
			}
			nextPass = s.now.Truncate(watchdogPeriod).Add(watchdogPeriod)
			if due, dueOK, err = s.be.nextDue(s.ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// pass runs the watchdog, first noting how long the overdue jobs waited and
// which waited too long, on the process's clock.
//
// A job the watchdog could not repair because the injected faults refused
// each attempt of a pass waits from that pass on: three commits failing in
// a row (1 in 15,625 at the heavy level's 4%) otherwise made a job that
// only the watchdog could help, its task lost, wait a second period, and
// whether a run drew that depended on which concurrent handler drew which
// number, not on the engine.
func (s *sim) pass() error {
	now := s.clock()
	ids, err := s.store.Overdue(s.ctx, now, 1<<20)
	if err != nil {
		return err
	}
	for _, id := range ids {
		j, err := s.store.Job(s.ctx, id)
		if err != nil {
			return err
		}
		wait := now.Sub(later(later(j.WatchdogTimerTs, s.up), s.refusedAt[id]))
		s.rep.MaxRepairDelaySeconds = max(s.rep.MaxRepairDelaySeconds, wait.Seconds())
		s.note(id, "watchdog pass: state %s, timer %s passed, waited %.1fs", j.State, j.WatchdogTimerTs.UTC().Format("15:04:05.000"), wait.Seconds())
		if wait > watchdogPeriod+watchdogGrace && !s.stuck[id] {
			s.stuck[id] = true
			s.rep.StuckJobs++
			s.timelines.stuckNow(id, wait)
		}
	}
	_, err = s.wd.Pass(s.ctx)
	s.mu.Lock()
	for id := range s.refused {
		s.refusedAt[id] = now
		s.rep.RepairsRefused++
		s.note(id, "watchdog gave up on it for this pass: the store refused every attempt")
	}
	clear(s.refused)
	s.mu.Unlock()
	s.rep.Stuck = s.timelines.report()
	return err
}

// check accounts for every due occurrence from the store's records.
func (s *sim) check(end time.Time) error {
	for _, j := range s.jobs {
		sched, err := j.def.Parse(j.id)
		if err != nil {
			return err
		}
		due := 0
		if j.fixed {
			from, to := start.Add(time.Nanosecond), end.Add(time.Nanosecond)
			for range sched.Between(from, to) {
				due++
			}
			// Fire times a DST gap swallowed (gap: skip) are due too: the
			// engine must record them as skipped.
			for _, n := range sched.GapSkipped(from, to) {
				due += n
			}
		}
		recorded := 0
		for p := (store.Page{Limit: 500}); ; {
			invs, next, err := s.store.Invocations(s.ctx, j.id, p)
			if err != nil {
				return err
			}
			for _, inv := range invs {
				s.rep.Invocations[inv.Status]++
				if s.launchedKeys[j.id+"/"+inv.ID] {
					s.rep.InvocationsLaunched++
				}
				if inv.Manual || inv.Occurrence.After(end) {
					continue
				}
				n := 1
				if inv.Count > 1 && inv.Last.After(end) {
					// A record of several skipped occurrences may run past
					// the end; count only those up to it.
					n = 0
					for range sched.Between(inv.Occurrence, end.Add(time.Nanosecond)) {
						n++
					}
				} else if inv.Count > 1 {
					n = inv.Count
				}
				recorded += n
				if inv.Status == string(statemachine.StatusSkipped) {
					s.rep.Skipped[inv.Reason] += n
				}
			}
			if next == "" {
				break
			}
			p.Cursor = next
		}
		// An occurrence waiting for a free slot (queue_one) is accounted
		// for by the job's state until it starts.
		job, err := s.store.Job(s.ctx, j.id)
		if err != nil {
			return err
		}
		m, err := engine.State(job)
		if err != nil {
			return err
		}
		if p := m.Pending; p != nil && !p.Manual && !p.At.After(end) {
			recorded++
		}
		// A job still paused records what fell in the pause when resumed,
		// fire times a DST gap swallowed included: they are due above.
		if m.State == statemachine.Paused && j.fixed {
			from, to := m.Cursor.Add(time.Nanosecond), end.Add(time.Nanosecond)
			for range sched.Between(from, to) {
				recorded++
			}
			for _, n := range sched.GapSkipped(from, to) {
				recorded += n
			}
		}
		if j.fixed {
			s.rep.OccurrencesDue += due
			if recorded != due {
				s.rep.Unaccounted += abs(due - recorded)
			}
		}
	}
	return nil
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// schedules is the mix of schedules the jobs draw from, most of them hashed
// so that the jobs spread as real ones do.
var schedules = []struct {
	expr, zone string
	period     time.Duration // about how often it fires
}{
	{"H * * * *", "", time.Hour},
	{"H/30 * * * *", "", 30 * time.Minute},
	{"H/15 * * * *", "", 15 * time.Minute},
	{"H H/2 * * *", "", 2 * time.Hour},
	{"H H * * *", "", 24 * time.Hour},
	{"30 2 * * *", "America/New_York", 24 * time.Hour},
	{"*/30 * * * *", "America/New_York", 30 * time.Minute}, // gap: skip by default
	{"H/20 9-17 * * 1-5", "Europe/London", 20 * time.Minute},
	{"0 */3 * * *", "Asia/Kathmandu", 3 * time.Hour},
	{"@every 45m", "", 45 * time.Minute},
}

// newJob draws a job: a schedule, policies, and a target that runs the
// attempts on its own, for a time that sometimes overruns the period, or
// within the call.
func (s *sim) newJob(i int) simJob {
	sc := schedules[s.rng.IntN(len(schedules))]
	overlaps := []statemachine.Overlap{statemachine.OverlapSkip, statemachine.OverlapQueueOne, statemachine.OverlapAllow, statemachine.OverlapReplace}
	p := statemachine.Policy{
		Overlap:       overlaps[s.rng.IntN(len(overlaps))],
		MaxConcurrent: 1 + s.rng.IntN(3),
		MaxAttempts:   1 + s.rng.IntN(3),
		MinBackoff:    10 * time.Second,
		MaxBackoff:    5 * time.Minute,
		Timeout:       sc.period,
	}
	if s.rng.IntN(4) == 0 {
		p.CatchupWindow = 10 * time.Minute
	}
	if s.rng.IntN(4) == 0 {
		p.Jitter = 30 * time.Second
	}
	// Most runs take a small part of the period; one job in ten overruns it.
	run := time.Duration(s.rng.Int64N(int64(sc.period / 4)))
	if s.rng.IntN(10) == 0 {
		run = sc.period + time.Duration(s.rng.Int64N(int64(sc.period)))
	}
	kind := "sim"
	idempotent := false
	if s.rng.IntN(3) == 0 {
		kind = "blind"
		idempotent = s.rng.IntN(2) == 0
		p.Idempotent = idempotent
	}
	sp := spec{Duration: run, FailRate: 0.05 * float64(s.rng.IntN(3))}
	// One job in three calls a target that runs the attempt within the
	// call: its outcome comes back with the launch, and a crash after the
	// call loses an attempt that has already ended.
	sp.Sync = s.rng.IntN(3) == 0
	spec, _ := json.Marshal(sp)
	return simJob{
		id:         fmt.Sprintf("p%d/job-%d", i%20, i),
		def:        engine.Definition{Schedule: sc.expr, TimeZone: sc.zone, Policy: p, Target: kind, Spec: spec},
		idempotent: idempotent,
		fixed:      sc.expr[0] != '@',
	}
}
