package engine

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"time"

	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// Notify says where to tell people of a job's transitions: a webhook, the
// format of its JSON body, and which transitions.
type Notify struct {
	URL string
	// Format is the body's shape: "" (generic), "slack" or "google_chat".
	Format string
	// On lists the transitions to tell of: NotifyFailure, NotifyRecovery.
	On []string
}

// The transitions a job's notify may ask for.
const (
	// NotifyFailure: an invocation failed after the last one succeeded
	// (or after none ran): the job started failing.
	NotifyFailure = "failure"
	// NotifyRecovery: an invocation succeeded after one or more failed.
	NotifyRecovery = "recovery"
)

func (n *Notify) equal(o *Notify) bool {
	if n == nil || o == nil {
		return n == o
	}
	return n.URL == o.URL && n.Format == o.Format && slices.Equal(n.On, o.On)
}

// Notice is one transition of a job to tell people of.
type Notice struct {
	// Key is the same for every delivery of one transition (job,
	// invocation, transition), for a receiver to drop a repeat.
	Key        string
	JobID      string
	Invocation string
	// Event is NotifyFailure or NotifyRecovery.
	Event   string
	Status  statemachine.Status
	Message string
	// Failures is how many invocations in a row failed: this one's streak
	// for a failure, the streak it ended for a recovery.
	Failures int
	At       time.Time
	Notify   Notify
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
	host := jt.def.Notify.URL
	if u, err := url.Parse(host); err == nil {
		host = u.Host // the rest of a webhook's URL is often its secret
	}
	inv.Log = appendLog(inv.Log, []byte(fmt.Sprintf("%s notify %s: sending to %s\n", jt.now.UTC().Format(time.RFC3339Nano), event, host)), jt.e.opts.LogLimit)
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
