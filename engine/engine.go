// Package engine drives jobs: it runs the state machine inside store
// transactions, turns its actions into task-queue tasks and invocation
// records, and calls targets after the writes that record those calls have
// committed. It is the same in the embedded and the cloud shape; only the
// store.Store and task.Queue behind it differ.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/slo"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/task"
)

// Options configure an Engine.
type Options struct {
	// Now is the clock. Required: the engine never reads the wall clock.
	Now func() time.Time
	// Config holds the engine-wide durations; the zero value takes
	// statemachine.DefaultConfig.
	Config statemachine.Config
	// NewNonce returns fresh non-zero nonces; nil draws random ones.
	NewNonce func() int64
	// Logger receives what operators should see; nil discards it.
	Logger *slog.Logger
	// Observer is told what happened after each commit (metrics); nil is none.
	Observer Observer
	// Notifier delivers the notifications jobs' notify ask for; nil sends
	// none (and records none).
	Notifier Notifier
	// MaxCallsPerProject bounds the target calls one project has in flight
	// in this process; a StartInvocation over it is handed back to the
	// queue (ErrBusy) instead of holding a worker, so a project with slow
	// or hanging targets cannot take every worker from the others. 0 means
	// no bound.
	MaxCallsPerProject int
	// LogLimit is the most bytes kept of an invocation's debug log, half
	// from its head and half from its tail; 0 means 64 KiB.
	LogLimit int
	// Retention is the server's default history retention, for jobs whose
	// definition sets none: a backfill may not reach back past it. The
	// zero value takes DefaultRetention.
	Retention Retention
	// Objective is the server's default objectives, for jobs whose
	// definition sets none; the zero value sets none.
	Objective slo.Objective
	// Wait waits d, or until ctx ends (its error then), between the tries
	// of a write the store failed; nil waits on a timer. A simulation on
	// a clock of its own gives one that returns at once: its days must
	// not wait on the wall clock.
	Wait func(ctx context.Context, d time.Duration) error
}

// Observer is told about what committed, for metrics.
type Observer interface {
	// Launched: an attempt is being handed to its target, lateness after
	// its occurrence's scheduled time plus jitter.
	Launched(jobID string, lateness time.Duration)
	// Ended: an invocation ended with this status.
	Ended(jobID string, status statemachine.Status)
	// Skipped: count occurrences will not run, for this reason.
	Skipped(jobID string, reason statemachine.SkipReason, count int)
	// Repaired: the watchdog re-issued or ended something of the job.
	Repaired(jobID string)
	// Disabled: the job became DISABLED, or DISABLED for another kind of
	// reason.
	Disabled(jobID string, reason statemachine.Reason)
	// TaskFailed: a delivery of one of the job's tasks failed, with a
	// permanent error (the job is disabled and the task dropped) or a
	// transient one (the task is delivered again). Expected redeliveries
	// (ErrBusy, a launch in progress) are not failures.
	TaskFailed(jobID string, kind task.Kind, permanent bool)
}

// StateObserver is an Observer that is also told the state each committed
// transaction left a job in, to follow jobs in trouble (failing in a row,
// running long) without reading every job. The state is shared: it must
// not be changed nor kept.
type StateObserver interface {
	Settled(jobID string, s statemachine.JobState)
}

// ObjectiveObserver is an Observer that is also told how each first
// launch, each end and each occurrence skipped for lateness counts
// against the job's objectives (slo.Late, slo.Succeeded), for burn-rate
// metrics; jobs without objectives tell it nothing.
type ObjectiveObserver interface {
	Judged(jobID string, kind slo.Kind, target float64, j slo.Judgement)
}

// Engine runs jobs. It is safe for concurrent use.
type Engine struct {
	store   store.Store
	queue   task.Queue
	targets map[string]targets.Target
	opts    Options
	cache   jobCache

	mu    sync.Mutex
	calls map[string]int // target calls in flight, by project
	// prepared holds the attempts whose launch PrepareTask committed and
	// whose target this process has not called yet, by attempt key; true
	// once an AbortTarget of one was carried out here, which calls its
	// launch off.
	prepared map[attemptRef]bool

	applying   chan struct{} // a slot per job being applied (parallel)
	workerTurn chan struct{} // held while one apply takes its slots (pipelined)
}

// ErrBusy is returned by HandleTask for a StartInvocation of a project that
// has Options.MaxCallsPerProject calls in flight; the queue delivers it
// again later.
var ErrBusy = errors.New("the project has as many target calls in flight as it may")

// New returns an engine over a store and a queue, with the targets by kind.
func New(st store.Store, q task.Queue, targets map[string]targets.Target, opts Options) *Engine {
	if opts.Now == nil {
		panic("engine: Options.Now is required")
	}
	if opts.Config == (statemachine.Config{}) {
		opts.Config = statemachine.DefaultConfig
	}
	if opts.Wait == nil {
		opts.Wait = waitOnTimer
	}
	if opts.Config.MinPoll <= 0 {
		opts.Config.MinPoll = statemachine.DefaultConfig.MinPoll
	}
	if opts.Config.MaxPoll <= 0 {
		opts.Config.MaxPoll = statemachine.DefaultConfig.MaxPoll
	}
	if opts.NewNonce == nil {
		opts.NewNonce = randomNonce
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Retention = opts.Retention.Fill(DefaultRetention)
	if opts.LogLimit <= 0 {
		opts.LogLimit = 64 << 10
	}
	return &Engine{store: st, queue: q, targets: targets, opts: opts, calls: map[string]int{}, prepared: map[attemptRef]bool{}, applying: make(chan struct{}, applyWorkers), workerTurn: make(chan struct{}, 1)}
}

func randomNonce() int64 {
	for {
		if n := rand.Int64(); n != 0 {
			return n
		}
	}
}

// check refuses a definition the engine cannot run.
func (e *Engine) check(jobID string, def *Definition) error {
	if _, err := jobid.Parse(jobID); err != nil {
		return err
	}
	if _, ok := e.targets[def.Target]; !ok {
		return fmt.Errorf("job %s: unknown target %q", jobID, def.Target)
	}
	if _, err := def.Parse(jobID); err != nil {
		return fmt.Errorf("job %s: %w", jobID, err)
	}
	return nil
}

// runsWithinCall reports whether the target kind runs its attempts within
// the call (targets.Synchronous).
func (e *Engine) runsWithinCall(kind string) bool {
	_, ok := e.targets[kind].(targets.Synchronous)
	return ok
}

// ProjectOf returns the project part of a job id.
func ProjectOf(jobID string) string { return jobid.Split(jobID).Project }

// jobName is the job's name within its project.
func jobName(jobID string) string { return jobid.Split(jobID).Job }

// Repair delivers WatchdogExpired to the job: it re-issues what the job
// waits for past its time and ends attempts past their hard timeout. It
// reports whether anything was repaired. A job that a permanent error
// stops is disabled instead, which leaves it nothing to wait for.
func (e *Engine) Repair(ctx context.Context, jobID string) (bool, error) {
	c, err := e.update(ctx, jobID, stepping(statemachine.WatchdogExpired{}))
	if pe := asPermanent(err); pe != nil {
		if err := e.disableBroken(ctx, jobID, pe); err != nil {
			return false, err
		}
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if len(c.acts) > 0 && e.opts.Observer != nil {
		e.opts.Observer.Repaired(jobID)
	}
	return len(c.acts) > 0, e.carryOut(ctx, jobID, c)
}

// Check asks the target how a RUNNING attempt is doing, and records its
// end if it has ended: what a push from the remote system asks for. It is
// idempotent, and safe beside a poll of the same attempt: the end is
// recorded in a transaction that finds the attempt RUNNING, once. An
// attempt that is not RUNNING (ended, or not yet launched) is left alone.
func (e *Engine) Check(ctx context.Context, jobID, invocation string, attempt int) error {
	inv, err := e.store.Invocation(ctx, jobID, invocation)
	if err != nil {
		return fmt.Errorf("reading invocation %s/%s: %w", jobID, invocation, err)
	}
	if inv.Attempt != attempt || inv.Status != string(statemachine.StatusRunning) {
		return nil
	}
	fn, err := e.checkRunning(ctx, jobID, invocation, attempt, inv)
	if err != nil {
		return err
	}
	c, err := e.update(ctx, jobID, fn)
	if err != nil {
		return err
	}
	return e.carryOut(ctx, jobID, c)
}

// Report records the end of an attempt that its target ran on its own
// (Result Running at launch).
func (e *Engine) Report(ctx context.Context, jobID, invocation string, attempt int, res targets.Result) error {
	c, err := e.update(ctx, jobID, e.outcome(invocation, attempt, res))
	if err != nil {
		return err
	}
	return e.carryOut(ctx, jobID, c)
}

// HandleTask runs a delivered task. It returns an error when the task
// should be delivered again: a transient one, which it counts in the job's
// Health. A permanent error disables the job (disableBroken) and drops the
// task; a malformed task, or one of an unknown job, is dropped.
func (e *Engine) HandleTask(ctx context.Context, t task.Task) error {
	var ev statemachine.Event
	switch t.Kind {
	case task.TickLater:
		// The tick launches the occurrence it makes due itself when the
		// project has a call to spare: one commit less before every
		// launch, and no StartInvocation to write, claim and delete. Its
		// task stands for that start (statemachine.Tick), so it takes the
		// slot a start would.
		project := ProjectOf(t.JobID)
		start := e.acquire(project)
		if start {
			defer e.release(project)
		}
		ev = statemachine.Tick{Nonce: t.Nonce, Start: start}
	case task.StartInvocation:
		ev = statemachine.Starting{Invocation: t.Invocation, Attempt: t.Attempt, Nonce: t.Nonce}
		// Take the project's slot before LAUNCHING is written: a task handed
		// back must not leave a launch behind it.
		project := ProjectOf(t.JobID)
		if !e.acquire(project) {
			return ErrBusy
		}
		defer e.release(project)
	case task.PollInvocation:
		ev = statemachine.PollDue{Invocation: t.Invocation, Attempt: t.Attempt, Nonce: t.Nonce}
	case task.NotifyLongRun:
		return e.notifyLongRun(ctx, t)
	default:
		e.opts.Logger.Warn("dropping a malformed task", "task", t.String())
		return nil
	}
	troubled := false
	c, err := e.update(ctx, t.JobID, func(jt *jobTx) error {
		troubled = jt.health != (Health{})
		return jt.step(ev)
	})
	return e.finish(ctx, t, c, troubled, err)
}

// finish carries out what a task's committed step asked for (c, or the
// update's error err), and sorts out how the task ended: see HandleTask.
// troubled says the job's Health held a failure when the step began.
func (e *Engine) finish(ctx context.Context, t task.Task, c committed, troubled bool, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		e.opts.Logger.Warn("dropping a task of an unknown job", "task", t.String())
		return nil
	}
	if err == nil {
		err = e.carryOut(ctx, t.JobID, c)
	}
	switch {
	case err == nil:
		if troubled {
			e.setHealth(ctx, t.JobID, nil)
		}
		return nil
	case errors.Is(err, ErrBusy), errors.Is(err, statemachine.ErrLaunchInProgress):
		// Expected: not the job's trouble, nor the queue's to report.
		return fmt.Errorf("%w (%w)", err, task.ErrRetryLater)
	case ctx.Err() != nil:
		// The process stopping: not the job's trouble. A stop's cause
		// (task.ErrStopping) goes with the error, so the queue can tell a
		// clean stop from a failure.
		if cause := context.Cause(ctx); !errors.Is(err, cause) {
			return fmt.Errorf("%w: %w", cause, err)
		}
		return err
	}
	pe := asPermanent(err)
	if o := e.opts.Observer; o != nil {
		o.TaskFailed(t.JobID, t.Kind, pe != nil)
	}
	if pe == nil {
		e.setHealth(ctx, t.JobID, err)
		return err
	}
	if err := e.disableBroken(ctx, t.JobID, pe); err != nil {
		return fmt.Errorf("job %s cannot run (%v), and disabling it failed: %w", t.JobID, pe, err)
	}
	return nil
}

// errNotAhead ends a transaction PrepareTask cannot take ahead.
var errNotAhead = errors.New("the tick cannot be taken ahead")

// MaxAhead is the furthest ahead of its time PrepareTask takes a tick. A
// prepared tick moves the job's Cursor to an occurrence still to come, and
// a new definition applied before then starts at the Cursor, not at its
// own time; occurrences fall on whole seconds, so within a second of the
// prepared one there is none of the new definition's for that to pass
// over unrecorded.
const MaxAhead = time.Second

// PrepareTask is a task.Preparer. A tick claimed up to MaxAhead before
// its time, of a job that awaits nothing but that tick
// (statemachine.AwaitsOnlyTick), is stepped now, as of its time: the occurrence it makes due, and the
// attempt it starts, commit before the occurrence's time instead of in
// its lateness. What it returns calls the target, and must run at the
// tick's time, not before: a write still comes before every call, and no
// call comes early. Until the tick's time only a request can change such
// a job; one that comes between (a pause, a new definition) applies from
// the next occurrence, as it would had it come while the target was being
// called, except an abort of the attempt, which calls its launch off
// (callOff). Anything else is not prepared, and is handled at its time.
func (e *Engine) PrepareTask(ctx context.Context, t task.Task) (task.Handler, bool) {
	if now := e.opts.Now(); t.Kind != task.TickLater || !t.ETA.After(now) || t.ETA.Sub(now) > MaxAhead {
		return nil, false
	}
	project := ProjectOf(t.JobID)
	if !e.acquire(project) {
		return nil, false
	}
	troubled := false
	c, err := e.update(ctx, t.JobID, func(jt *jobTx) error {
		if jt.job == nil || jt.stateErr != nil || jt.defErr != nil || !jt.m.AwaitsOnlyTick(t.Nonce) {
			return errNotAhead
		}
		// As of the tick's time; a transaction that comes later (a store
		// far behind) is an ordinary tick, and records when it ran.
		if jt.now.Before(jt.m.TickAt) {
			jt.now = jt.m.TickAt
		}
		troubled = jt.health != (Health{})
		return jt.step(statemachine.Tick{Nonce: t.Nonce, Start: true})
	})
	if err != nil {
		// Handled at its time, where an error is reported as usual: a
		// transaction that failed committed nothing.
		e.release(project)
		return nil, false
	}
	e.mu.Lock()
	for _, a := range c.acts {
		if l, ok := a.(statemachine.Launch); ok {
			e.prepared[attemptRef{t.JobID, l.Invocation, l.Attempt}] = false
		}
	}
	e.mu.Unlock()
	return func(ctx context.Context, t task.Task) error {
		defer e.release(project)
		return e.finish(ctx, t, c, troubled, nil)
	}, true
}

// maxLastError bounds the error kept in a job's Health: the error of a
// target or a store may carry a whole response.
const maxLastError = 1 << 10

// setHealth records a transient failure of the job's task (cause), or
// clears the record after a success (cause nil), in a transaction of its
// own. It is best effort: the store that failed the task may fail this
// too, and the task's redelivery does not wait for it.
func (e *Engine) setHealth(ctx context.Context, jobID string, cause error) {
	_, err := e.update(ctx, jobID, func(jt *jobTx) error {
		if cause == nil {
			jt.health = Health{}
			return nil
		}
		msg := cause.Error()
		if len(msg) > maxLastError {
			msg = strings.ToValidUTF8(msg[:maxLastError], "") + "..."
		}
		jt.health = Health{TaskFailures: jt.health.TaskFailures + 1, LastError: msg, LastErrorAt: jt.now}
		return nil
	})
	if err != nil {
		e.opts.Logger.Warn("recording the job's health failed", "job", jobID, "err", err)
	}
}

// attemptRef names one attempt of one of a job's invocations.
type attemptRef struct {
	jobID, invocation string
	attempt           int
}

// calling reports whether the launch of an attempt is still to be made:
// false if it was prepared and an abort called it off meanwhile. It
// forgets the attempt as prepared.
func (e *Engine) calling(jobID, invocation string, attempt int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.prepared) == 0 {
		return true
	}
	k := attemptRef{jobID, invocation, attempt}
	off := e.prepared[k]
	delete(e.prepared, k)
	return !off
}

// callOff calls off the launch of an attempt that was prepared and not
// made yet, and reports whether it did: its target has nothing to stop.
func (e *Engine) callOff(jobID, invocation string, attempt int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := attemptRef{jobID, invocation, attempt}
	if _, ok := e.prepared[k]; !ok {
		return false
	}
	e.prepared[k] = true
	return true
}

func (e *Engine) acquire(project string) bool {
	if e.opts.MaxCallsPerProject <= 0 {
		return true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.calls[project] >= e.opts.MaxCallsPerProject {
		return false
	}
	e.calls[project]++
	return true
}

func (e *Engine) release(project string) {
	if e.opts.MaxCallsPerProject <= 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.calls[project]--; e.calls[project] == 0 {
		delete(e.calls, project)
	}
}

// updateOrDisable is update for requests: a job that a permanent error
// stops is disabled first, and the request is then made of the DISABLED
// job, which refuses it or takes it as a no-op.
func (e *Engine) updateOrDisable(ctx context.Context, jobID string, fn func(*jobTx) error) (committed, error) {
	c, err := e.update(ctx, jobID, fn)
	return e.orDisable(ctx, jobID, fn, c, err)
}

// orDisable is the rest of updateOrDisable, given what its first update
// of the job returned.
func (e *Engine) orDisable(ctx context.Context, jobID string, fn func(*jobTx) error, c committed, err error) (committed, error) {
	if pe := asPermanent(err); pe != nil {
		if err := e.disableBroken(ctx, jobID, pe); err != nil {
			return committed{}, err
		}
		return e.update(ctx, jobID, fn)
	}
	return c, err
}

func stepping(ev statemachine.Event) func(*jobTx) error {
	return func(jt *jobTx) error { return jt.step(ev) }
}

// Now is the engine's clock: the one whose time the API's relative
// times ("the last 24 hours") count from.
func (e *Engine) Now() time.Time { return e.opts.Now() }
