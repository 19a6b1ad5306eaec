package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/targets"
	"github.com/sundial-cron/sundial/task"
)

// carryOut makes the target calls that committed steps asked for, and
// records what they returned, until no step asks for more.
func (e *Engine) carryOut(ctx context.Context, jobID string, c committed) error {
	for len(c.acts) > 0 {
		var next committed
		for _, a := range c.acts {
			var fn func(*jobTx) error
			var err error
			switch a := a.(type) {
			case statemachine.Launch:
				if !e.calling(jobID, a.Invocation, a.Attempt) {
					continue // prepared, then aborted before its time
				}
				fn, err = e.launch(ctx, jobID, a.Invocation, a.Attempt, c.records[a.Invocation])
			case statemachine.Resolve:
				fn, err = e.resolve(ctx, jobID, a.Invocation, a.Attempt, c.records[a.Invocation])
			case statemachine.Check:
				fn, err = e.checkRunning(ctx, jobID, a.Invocation, a.Attempt, c.records[a.Invocation])
			case statemachine.AbortTarget:
				if !e.callOff(jobID, a.Invocation, a.Attempt) {
					e.abortTarget(ctx, jobID, a.Invocation, a.Attempt, c.records[a.Invocation])
				}
				continue
			case statemachine.TickLater, statemachine.StartInvocation, statemachine.PollLater, statemachine.Record, statemachine.RecordSkipped:
				continue // writes, committed with the step
			default:
				panic(fmt.Sprintf("engine: unknown action %T", a))
			}
			if err != nil {
				return err
			}
			if stopping(ctx) {
				// The server stopped and ended the call: it is alive and
				// knows the outcome, so it records it rather than leave a
				// launch in doubt for the next start, and starts nothing
				// more.
				return e.recordAtStop(ctx, jobID, fn)
			}
			more, err := e.recordCall(ctx, jobID, fn)
			if err != nil {
				return err
			}
			next.acts = append(next.acts, more.acts...)
			for id, inv := range more.records {
				if next.records == nil {
					next.records = map[string]*store.InvocationRecord{}
				}
				next.records[id] = inv
			}
		}
		c = next
	}
	return nil
}

// recordCallBackoff are the waits between the tries of recordCall.
var recordCallBackoff = []time.Duration{
	100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond,
	1600 * time.Millisecond, 3200 * time.Millisecond, 5 * time.Second, 5 * time.Second, 5 * time.Second,
	5 * time.Second, 5 * time.Second, 5 * time.Second,
}

// recordCall records what a target call returned, trying again for about
// 40 s if the store fails: the process knows the outcome, and a store
// back within that time (a database restarting, a connection cut, a
// failover) should get it, rather than have the attempt end as timed out,
// a success taken for a failure. A job's permanent error is not the
// store's, and is not tried again. Trying again is safe: a try that
// committed though its caller heard an error makes the next one's
// outcome stale, and it changes nothing. The writes the next launches wait
// for go first (store.Deferrable).
func (e *Engine) recordCall(ctx context.Context, jobID string, fn func(*jobTx) error) (committed, error) {
	for i := 0; ; i++ {
		c, err := e.update(store.Deferrable(ctx), jobID, fn)
		if err == nil || asPermanent(err) != nil || i == len(recordCallBackoff) || ctx.Err() != nil {
			return c, err
		}
		if e.opts.Wait(ctx, recordCallBackoff[i]) != nil {
			return c, err
		}
	}
}

// waitOnTimer is Options.Wait's default.
func waitOnTimer(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// stopRecordGrace bounds the write that records a call the server's stop
// ended.
const stopRecordGrace = 5 * time.Second

// stopping reports whether ctx ended because the server is stopping and
// its stop grace ran out (task.ErrStopping), not because the process died.
func stopping(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), task.ErrStopping)
}

// recordAtStop records the outcome of a call that the server's stop ended,
// on a context of its own, and returns the stop as the task's error: the
// task comes again at the next start, and finds its step done.
func (e *Engine) recordAtStop(ctx context.Context, jobID string, fn func(*jobTx) error) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopRecordGrace)
	defer cancel()
	if _, err := e.update(rctx, jobID, fn); err != nil {
		return fmt.Errorf("%w; recording the call it ended: %w", context.Cause(ctx), err)
	}
	return context.Cause(ctx)
}

// targetRequest builds what the target is given for an attempt, from the
// invocation's record: the definition it was created under, not the job's
// current one. inv is the record as the step that asked for the call
// committed it, or nil to read it.
func (e *Engine) targetRequest(ctx context.Context, jobID, invocation string, attempt int, inv *store.InvocationRecord) (targets.Target, targets.Request, *Definition, error) {
	if inv == nil {
		var err error
		if inv, err = e.store.Invocation(ctx, jobID, invocation); err != nil {
			return nil, targets.Request{}, nil, fmt.Errorf("reading invocation %s/%s: %w", jobID, invocation, err)
		}
	}
	def, err := e.definitionOf(ctx, inv)
	if err != nil {
		// Not permanent for the job (%v, not %w): the job's own definition
		// was usable, or its step would have failed first. The attempt's
		// task is delivered again until its hard timeout ends it.
		return nil, targets.Request{}, nil, fmt.Errorf("invocation %s/%s: %v", jobID, invocation, err)
	}
	req := targets.Request{
		Key:        jobID + "/" + invocation,
		JobID:      jobID,
		Invocation: invocation,
		Occurrence: inv.Occurrence,
		Attempt:    attempt,
		Spec:       def.Spec,
		// An attempt's output and the engine's lines about it fit in the
		// log whole; a later attempt's may push the middle out.
		LogLimit: e.opts.LogLimit / 2,
	}
	return e.targets[def.Target], req, def, nil
}

// launch calls the target for an attempt whose LAUNCHING has committed, and
// returns the step that records the outcome.
func (e *Engine) launch(ctx context.Context, jobID, invocation string, attempt int, inv *store.InvocationRecord) (func(*jobTx) error, error) {
	tgt, req, def, err := e.targetRequest(ctx, jobID, invocation, attempt, inv)
	if err != nil {
		return nil, err
	}
	if o := e.opts.Observer; o != nil {
		lateness := e.opts.Now().Sub(req.Occurrence.Add(statemachine.Jitter(jobID, req.Occurrence, def.Policy.Jitter)))
		o.Launched(jobID, lateness)
		e.judgeLaunch(jobID, attempt, inv, def, lateness)
	}
	var res targets.Result
	if tgt == nil {
		res = targets.Result{Status: targets.Failed, Message: fmt.Sprintf("unknown target %q", def.Target)}
	} else {
		timeout := def.Policy.Timeout
		if timeout <= 0 {
			timeout = e.opts.Config.DefaultTimeout
		}
		callCtx, cancel := context.WithTimeout(ctx, timeout)
		res = tgt.Launch(callCtx, req)
		cancel()
		if res.Status == targets.Failed && stopping(ctx) {
			res.Message = "stopped with the server, its --stop-grace over: " + res.Message
		}
	}
	return e.outcome(invocation, attempt, res), nil
}

// resolve asks the target whether an attempt whose outcome was not recorded
// was launched, and returns the step that records the answer.
func (e *Engine) resolve(ctx context.Context, jobID, invocation string, attempt int, inv *store.InvocationRecord) (func(*jobTx) error, error) {
	tgt, req, _, err := e.targetRequest(ctx, jobID, invocation, attempt, inv)
	if err != nil {
		return nil, err
	}
	r, ok := tgt.(targets.Resolver)
	if !ok {
		return stepping(statemachine.OutcomeUnknown{Invocation: invocation, Attempt: attempt}), nil
	}
	launched, res, err := r.Resolve(ctx, req)
	switch {
	case errors.Is(err, targets.ErrUnknown):
		return stepping(statemachine.OutcomeUnknown{Invocation: invocation, Attempt: attempt}), nil
	case err != nil:
		return nil, fmt.Errorf("asking the target about %s: %w", req.Key, err)
	case !launched:
		return stepping(statemachine.NotLaunched{Invocation: invocation, Attempt: attempt}), nil
	}
	return e.outcome(invocation, attempt, res), nil
}

// checkRunning asks the target how a RUNNING attempt is doing, by its Resolver,
// and returns the step that records its end if it has ended. A target that
// cannot tell leaves the attempt to a later poll, a push, or its hard
// timeout.
func (e *Engine) checkRunning(ctx context.Context, jobID, invocation string, attempt int, inv *store.InvocationRecord) (func(*jobTx) error, error) {
	tgt, req, _, err := e.targetRequest(ctx, jobID, invocation, attempt, inv)
	if err != nil {
		return nil, err
	}
	r, ok := tgt.(targets.Resolver)
	if !ok {
		return func(*jobTx) error { return nil }, nil
	}
	launched, res, err := r.Resolve(ctx, req)
	switch {
	case errors.Is(err, targets.ErrUnknown):
		return func(*jobTx) error { return nil }, nil
	case err != nil:
		return nil, fmt.Errorf("asking the target about %s: %w", req.Key, err)
	case !launched:
		// The target accepted the launch, yet cannot find it now: a
		// listing that lags behind (Swarming's is eventually consistent)
		// says so too. The next poll asks again; the hard timeout ends an
		// attempt that is truly gone.
		return func(*jobTx) error { return nil }, nil
	}
	return e.outcome(invocation, attempt, res), nil
}

// outcome returns the step that records what the target said of an attempt.
func (e *Engine) outcome(invocation string, attempt int, res targets.Result) func(*jobTx) error {
	return func(jt *jobTx) error {
		if res.Status == targets.Running {
			return jt.step(statemachine.Launched{Invocation: invocation, Attempt: attempt, Message: res.Message})
		}
		jt.output = map[string][]byte{invocation: res.Log}
		return jt.step(statemachine.Ended{
			Invocation: invocation, Attempt: attempt,
			Succeeded: res.Status == targets.Succeeded, Message: res.Message,
		})
	}
}

// abortTarget asks the target to stop an attempt that is already recorded as
// ended. It is best effort: a failure is logged, and changes nothing.
func (e *Engine) abortTarget(ctx context.Context, jobID, invocation string, attempt int, inv *store.InvocationRecord) {
	tgt, req, _, err := e.targetRequest(ctx, jobID, invocation, attempt, inv)
	if err == nil {
		a, ok := tgt.(targets.Aborter)
		if !ok {
			return
		}
		err = a.Abort(ctx, req)
	}
	if err != nil {
		e.opts.Logger.Warn("aborting at the target failed", "job", jobID, "invocation", invocation, "err", err)
	}
}
