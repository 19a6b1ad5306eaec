// Package task defines the tasks the engine schedules on a task queue and
// the interface both queue backends offer: task/local (rows in the SQLite
// file) and task/cloudtasks.
//
// Delivery is at least once. A task carries what it expects (a nonce, an
// invocation id and attempt), so a duplicate, late or stale delivery is
// recognised by the engine and does nothing.
package task

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrRetryLater is wrapped by a handler's error that asks for the task
// again later as a matter of course (the project has as many target calls
// in flight as it may; a launch is still in progress) rather than reporting
// a fault. A queue delivers the task again as after any failure, but logs
// it only at debug level: a project of many jobs at its limit would
// otherwise write thousands of warnings a minute into the server's log.
var ErrRetryLater = errors.New("to be delivered again later")

// ErrStopping is the cause a queue gives the contexts of the handlers it
// stops when the server's stop grace (--stop-grace) runs out. Unlike the
// death of the process, it leaves the process alive: what a handler
// learned of its call it may still record, briefly, on a context of its
// own.
var ErrStopping = errors.New("the server is stopping: --stop-grace ran out")

// Kind says what a task asks the engine to do.
type Kind string

const (
	// TickLater wakes a job at its next occurrence. Nonce is the job's tick
	// nonce at the time it was scheduled.
	TickLater Kind = "tick"
	// StartInvocation launches one attempt of an invocation. Nonce is the
	// nonce of that attempt's start, so a repeat of an older start is stale.
	StartInvocation Kind = "start"
	// PollInvocation asks the target how a RUNNING attempt of an
	// asynchronous target is doing. Nonce is the attempt's poll nonce at
	// the time it was scheduled.
	PollInvocation Kind = "poll"
	// NotifyLongRun tells people of an attempt still running when its
	// job's notify long_run threshold has passed since its launch. Nonce
	// is that attempt's start nonce; an attempt that ended makes it stale.
	NotifyLongRun Kind = "long_run"
)

// Task is one task-queue task.
type Task struct {
	Kind  Kind
	JobID string    // "<project>/<job>"
	Nonce int64     // what the job must still expect for the task to act
	ETA   time.Time // not before

	// For StartInvocation and PollInvocation: the invocation and the
	// attempt to launch or ask about; for NotifyLongRun, the attempt
	// running long.
	Invocation string
	Attempt    int
}

// Name is the task's deterministic name, unique per job, kind and nonce: a
// second post of the same task is a duplicate, not a second task.
//
// It is built by hand, not with fmt: every task a launch enqueues, claims
// and deletes asks for its name, and fmt's boxing of its arguments was
// 2.6 % of an instance's CPU at 100,000 jobs (docs/benchmarks.md, "The
// job state's encoder").
func (t Task) Name() string {
	var nonce [20]byte
	// One allocation: the conversion of nonce's bytes within the
	// concatenation makes no copy of its own.
	return t.JobID + "/" + string(t.Kind) + "/" + string(strconv.AppendInt(nonce[:0], t.Nonce, 10))
}

func (t Task) String() string {
	if t.Kind == StartInvocation || t.Kind == PollInvocation || t.Kind == NotifyLongRun {
		return fmt.Sprintf("%s(%s %s#%d eta %s)", t.Kind, t.JobID, t.Invocation, t.Attempt, t.ETA.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("%s(%s nonce %d eta %s)", t.Kind, t.JobID, t.Nonce, t.ETA.UTC().Format(time.RFC3339))
}

// Handler runs a delivered task. A nil error acknowledges it (the task is
// deleted); an error asks the queue to deliver it again later.
type Handler func(ctx context.Context, t Task) error

// Preparer is offered a task claimed ahead of its ETA. It may take then,
// and commit, the part of the task's handling that nothing but a request
// can change before the ETA (its store writes), and return the handler of
// the rest, which runs at the ETA: calls out of the process come no
// earlier. ok false says it took nothing, and the task is handled at its
// ETA as any other.
type Preparer func(ctx context.Context, t Task) (rest Handler, ok bool)

// Queue is the part of a task-queue backend the engine talks to.
type Queue interface {
	// Post is told about tasks right after the store transaction that
	// enqueued them committed. A backend whose tasks live in the store
	// (task/local) only wakes its dispatcher; one that cannot join the
	// transaction (Cloud Tasks) creates them now, by Name. An error here
	// loses nothing: the job's WatchdogTimerTs was committed with the
	// tasks, and the watchdog enqueues them again.
	Post(ctx context.Context, tasks []Task) error
}
