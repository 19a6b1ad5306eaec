package simulate

import (
	"context"
	"errors"

	"github.com/sundial-cron/sundial/targets"
)

// A crash is the process dying between LAUNCHING committed and the outcome
// recorded: before the target is called, or after it returned. Every call
// the simulator makes into the engine runs in a context of its own
// (inProcess), as a handler runs in its process; the target ends that
// context where the crash falls, and faultyStore refuses the writes of an
// ended context, so the engine records nothing more of the call, as a dead
// process would not. An ended context is also what the engine gets when
// Dispatcher.Run stops its handlers: the simulator injects the crash
// through the path a process that stops takes, not through a hook.

// The points of the launch path where a crash falls, as the report counts
// them (crash_before-call, crash_after-call).
const (
	beforeCall = "before-call"
	afterCall  = "after-call"
)

var errCrash = errors.New("simulated crash")

// processKey holds the function that ends a call's process.
type processKey struct{}

// inProcess returns ctx as the context of one call into the engine, which
// a crash ends; end releases it.
func inProcess(ctx context.Context) (_ context.Context, end func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	return context.WithValue(ctx, processKey{}, cancel), func() { cancel(nil) }
}

// crash draws whether the process making the launch req dies at point p,
// and if so ends its call's context and reports true.
func (s *sim) crash(ctx context.Context, p string, req targets.Request) bool {
	if !s.injecting || s.rng.Float64() >= s.faults.Crash {
		return false
	}
	die, ok := ctx.Value(processKey{}).(context.CancelCauseFunc)
	if !ok {
		panic("simulate: a launch outside inProcess; every call into the engine must be in one")
	}
	s.count("crash_" + p)
	s.note(req.JobID, "injected: crash at %s of %s", p, req.Invocation)
	die(errCrash)
	return true
}
