// Package targets defines what an invocation runs. Implementations:
// targets/noop here; targets/urlfetch, targets/command and targets/swarming
// register the same interface.
package targets

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Request is one attempt of an invocation, as a target sees it.
type Request struct {
	// Key is the idempotency key: "<project>/<job>/<invocation id>". It is
	// the same for every attempt of an occurrence, so a receiver that
	// de-duplicates by it never runs an occurrence twice.
	Key        string
	JobID      string
	Invocation string
	Occurrence time.Time // the scheduled time
	Attempt    int
	// Spec is the target's part of the job definition the invocation was
	// created under, as JSON.
	Spec json.RawMessage
	// LogLimit is how many bytes of Result.Log the invocation's log keeps
	// whole; 0 says nothing. A target that bounds its own output (keeping
	// its head and tail, with a note of what it left out) keeps within it,
	// so its note is not cut away with the middle of a longer log.
	LogLimit int
}

// Status is how a launch turned out.
type Status int

const (
	// Failed: the attempt ran and failed, or could not be started.
	Failed Status = iota
	// Succeeded: the attempt ran and succeeded.
	Succeeded
	// Running: the target accepted the launch and runs it on its own; its
	// end is reported later, by a push or by the polls that ask the
	// target's Resolver, which an asynchronous target implements.
	Running
)

// Result is the outcome of a launch.
type Result struct {
	Status  Status
	Message string // one line: why it failed, or what it returned
	Log     []byte // output worth keeping in the invocation's debug log
}

// Target launches invocations of one kind.
type Target interface {
	// Launch runs (or starts) the attempt. ctx carries the job's timeout.
	// It is called only after LAUNCHING is committed.
	Launch(ctx context.Context, req Request) Result
}

// Synchronous is implemented by targets whose Launch runs the attempt to
// its end within the call (Succeeded or Failed, never Running): the call
// is the run. The engine records their attempts RUNNING from the commit
// that comes before the call, where another target's attempt reads
// LAUNCHING until the target has accepted it.
type Synchronous interface {
	// RunsWithinCall marks the target; it does nothing.
	RunsWithinCall()
}

// ErrUnknown is returned by Resolve when the target cannot tell.
var ErrUnknown = errors.New("launch outcome unknown")

// Resolver is implemented by targets that can tell, by the idempotency key,
// whether a launch happened. Targets that cannot make an ambiguous launch
// end as FAILED: launch outcome unknown.
type Resolver interface {
	// Resolve returns launched=false if the target never received the
	// attempt, or launched=true and how it went (Running if it has not
	// ended). It returns ErrUnknown if it cannot tell.
	Resolve(ctx context.Context, req Request) (launched bool, res Result, err error)
}

// Aborter is implemented by targets that can stop a running attempt.
type Aborter interface {
	Abort(ctx context.Context, req Request) error
}

// ProjectGate is implemented by targets that run the jobs of the projects
// their operator names, and no others: config validation asks it, so a
// config that may not use the target is refused at load, naming the file
// and line; the target asks itself again at launch.
type ProjectGate interface {
	// Allows returns nil if the target runs project's jobs, or an error
	// saying why it does not.
	Allows(project string) error
}

// ProjectChecker is implemented by targets whose operator grants each
// project only some of what a spec may name (the topics a pubsub job may
// publish to): config validation asks it after Check, so a config naming
// what its project was not granted is refused at load, naming the file,
// line and field; the target asks itself again at launch.
type ProjectChecker interface {
	// CheckFor returns nil if project's jobs may use spec, or the spec's
	// field at fault ("topic") and an error saying why not.
	CheckFor(project string, spec json.RawMessage) (field string, err error)
}

// Checker is implemented by targets that can tell a bad spec before any
// launch: config validation calls it, so a typo in a URL or an argv is an
// error that names the file and line, not a failed invocation at 3 a.m.
type Checker interface {
	// Check returns an error that names the field at fault.
	Check(spec json.RawMessage) error
}
