package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task"
)

// Notify says where to tell people of a job's transitions: a webhook, the
// format of its JSON body, and which transitions.
type Notify struct {
	URL string
	// Format is the body's shape: "" (generic), "slack" or "google_chat".
	Format string
	// On lists the transitions to tell of: NotifyFailure, NotifyRecovery.
	On []string
	// LongRun, if set, tells of an attempt still running this long after
	// its launch (NotifyLongRun), once per attempt.
	LongRun time.Duration
}

// The transitions a job's notify may ask for.
const (
	// NotifyFailure: an invocation failed after the last one succeeded
	// (or after none ran): the job started failing.
	NotifyFailure = "failure"
	// NotifyRecovery: an invocation succeeded after one or more failed.
	NotifyRecovery = "recovery"
	// NotifyLongRun: an attempt has run Notify.LongRun and not ended.
	NotifyLongRun = "long_run"
)

func (n *Notify) equal(o *Notify) bool {
	if n == nil || o == nil {
		return n == o
	}
	return n.URL == o.URL && n.Format == o.Format && slices.Equal(n.On, o.On) && n.LongRun == o.LongRun
}

// Notice is one transition of a job to tell people of.
type Notice struct {
	// Key is the same for every delivery of one transition (job,
	// invocation, transition), for a receiver to drop a repeat.
	Key        string
	JobID      string
	Invocation string
	// Event is NotifyFailure, NotifyRecovery or NotifyLongRun.
	Event   string
	Status  statemachine.Status
	Message string
	// Failures is how many invocations in a row failed: this one's streak
	// for a failure, the streak it ended for a recovery.
	Failures int
	// Attempt and Since are the attempt running long, and its launch.
	Attempt int
	Since   time.Time
	// At is when the transition was decided; Notify, where to tell it.
	At     time.Time
	Notify Notify
}

// Notifier delivers notices. What it returns, or its error, is written to
// the invocation's log; nothing it does changes the job.
type Notifier interface {
	Notify(ctx context.Context, n Notice) (string, error)
}

// notices decides, inside the transaction, whether it makes a transition
// the job's notify asks for, and writes that decision into the ended
// invocation's log with the rest of the transaction. Deciding here is
// what makes it once per transition: the transition commits exactly once,
// and a transaction retried on a conflict decides again from scratch.
func (jt *jobTx) notices() ([]Notice, error) {
	if jt.e.opts.Notifier == nil || jt.def == nil || jt.def.Notify == nil {
		return nil, nil
	}
	var event string
	var want statemachine.Status
	var failures int
	switch {
	case jt.loaded.Failures == 0 && jt.m.Failures > 0:
		event, want, failures = NotifyFailure, statemachine.StatusFailed, jt.m.Failures
	case jt.loaded.Failures > 0 && jt.m.Failures == 0:
		event, want, failures = NotifyRecovery, statemachine.StatusSucceeded, jt.loaded.Failures
	default:
		return nil, nil
	}
	if !slices.Contains(jt.def.Notify.On, event) {
		return nil, nil
	}
	var inv *store.InvocationRecord
	for _, id := range slices.Sorted(maps.Keys(jt.records)) {
		if r := jt.records[id]; r.Status == string(want) {
			inv = r
		}
	}
	if inv == nil {
		return nil, nil // not an invocation's end: a redefinition, say
	}
	n := Notice{
		Key: jt.job.ID + "/" + inv.ID + "/" + event, JobID: jt.job.ID, Invocation: inv.ID, Event: event,
		Status: want, Message: inv.Message, Failures: failures, At: jt.now, Notify: *jt.def.Notify,
	}
	inv.Log = appendLog(inv.Log, []byte(fmt.Sprintf("%s notify %s: sending to %s\n", jt.now.UTC().Format(time.RFC3339Nano), event, hostOf(jt.def.Notify.URL))), jt.e.opts.LogLimit)
	if err := jt.tx.PutInvocation(inv); err != nil {
		return nil, err
	}
	return []Notice{n}, nil
}

// deliver sends the notices a committed transaction decided on, and writes
// each outcome to its invocation's log. A crash between the commit and
// here leaves "sending" without an outcome in the log: never sent twice,
// and never lost silently.
func (e *Engine) deliver(ctx context.Context, notices []Notice) {
	for _, n := range notices {
		outcome, err := e.opts.Notifier.Notify(ctx, n)
		if err != nil {
			outcome = "not delivered: " + err.Error()
			e.opts.Logger.Warn("a notification was not delivered", "job", n.JobID, "invocation", n.Invocation, "event", n.Event, "err", err)
		}
		line := fmt.Sprintf("%s notify %s: %s\n", e.opts.Now().UTC().Format(time.RFC3339Nano), n.Event, outcome)
		_, err = e.store.Update(ctx, n.JobID, func(tx store.Tx) error {
			inv, err := tx.Invocation(n.Invocation)
			if err != nil {
				return err
			}
			inv.Log = appendLog(inv.Log, []byte(line), e.opts.LogLimit)
			return tx.PutInvocation(inv)
		})
		if err != nil {
			e.opts.Logger.Warn("recording a notification's outcome failed", "job", n.JobID, "invocation", n.Invocation, "err", err)
		}
	}
}

// hostOf is the host a webhook URL names: the rest of it is often its
// secret, and stays out of logs.
func hostOf(webhook string) string {
	if u, err := url.Parse(webhook); err == nil {
		return u.Host
	}
	return "the webhook"
}

// scheduleLongRun enqueues, with the write of an attempt's launch, the
// task that tells of it if it is still running when the job's notify
// long_run has passed. It commits with the launch, so it cannot be lost
// in the embedded shape; an attempt that ends first makes it stale.
func (jt *jobTx) scheduleLongRun(id string, attempt int) error {
	if jt.e.opts.Notifier == nil || jt.def == nil || jt.def.Notify == nil || jt.def.Notify.LongRun <= 0 {
		return nil
	}
	for _, a := range jt.m.Active {
		if a.ID == id && a.Attempt == attempt {
			return jt.tx.Enqueue(task.Task{Kind: task.NotifyLongRun, JobID: jt.job.ID, Nonce: a.Nonce,
				ETA: jt.now.Add(jt.def.Notify.LongRun), Invocation: id, Attempt: attempt})
		}
	}
	return nil
}

// longRunMark is the log line that records a long-run notification was
// decided for an attempt; finding it is what keeps a task delivered again
// from sending a second one.
func longRunMark(attempt int) string {
	return fmt.Sprintf("notify long_run (attempt %d): sending", attempt)
}

// notifyLongRun handles a NotifyLongRun task: if the attempt is still
// launching or running and was not told of yet, it records the decision
// in the invocation's log, then sends, then records the outcome. A stale
// task (the attempt ended, the job or its notify gone) does nothing.
func (e *Engine) notifyLongRun(ctx context.Context, t task.Task) error {
	if e.opts.Notifier == nil {
		return nil
	}
	var n *Notice
	_, err := e.store.Update(ctx, t.JobID, func(tx store.Tx) error {
		n = nil
		job, err := tx.Job()
		if err != nil {
			return err
		}
		def, _, err := e.cache.definition(t.JobID, job.Definition)
		if err != nil || def.Notify == nil || def.Notify.LongRun <= 0 {
			return errUnchanged
		}
		inv, err := tx.Invocation(t.Invocation)
		if err != nil {
			return err
		}
		st := statemachine.Status(inv.Status)
		if inv.Attempt != t.Attempt || (st != statemachine.StatusLaunching && st != statemachine.StatusRunning) ||
			strings.Contains(string(inv.Log), longRunMark(t.Attempt)) {
			return errUnchanged
		}
		now := e.opts.Now()
		inv.Log = appendLog(inv.Log, []byte(fmt.Sprintf("%s %s to %s\n", now.UTC().Format(time.RFC3339Nano), longRunMark(t.Attempt), hostOf(def.Notify.URL))), e.opts.LogLimit)
		if err := tx.PutInvocation(inv); err != nil {
			return err
		}
		n = &Notice{
			Key:   fmt.Sprintf("%s/%s/%s-%d", t.JobID, t.Invocation, NotifyLongRun, t.Attempt),
			JobID: t.JobID, Invocation: t.Invocation, Event: NotifyLongRun, Status: st,
			Attempt: t.Attempt, Since: inv.Started, At: now, Notify: *def.Notify,
		}
		return nil
	})
	switch {
	case errors.Is(err, errUnchanged), errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	e.deliver(ctx, []Notice{*n})
	return nil
}
