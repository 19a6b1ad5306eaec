package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sundial-cron/sundial/schedule"
	"github.com/sundial-cron/sundial/slo"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/task"
)

// errUnchanged ends a transaction that has nothing to write.
var errUnchanged = errors.New("unchanged")

// jobTx is one transaction on a job: the machine steps it runs and the
// writes they make.
type jobTx struct {
	e   *Engine
	tx  store.Tx
	now time.Time

	job    *store.JobRecord // nil for a job that does not exist yet
	def    *Definition
	sched  *schedule.Schedule
	m      statemachine.JobState
	health Health
	trail  []AuditEntry // the job's audit trail, oldest first
	// stateErr and defErr are the permanent errors of a stored state or
	// definition that could not be used (permanentError). A step fails
	// with them, except one of a job that is idle; save refuses to write
	// over a state it could not read.
	stateErr, defErr error
	// loaded is the job's state and reason as loaded, to tell when a
	// transaction disabled it; stored is the digest of its bytes, to tell
	// when save has nothing new to write.
	loaded statemachine.JobState
	stored digest

	actions []statemachine.Action
	// output is what a target returned for an attempt, for its log.
	output map[string][]byte
	// records are the invocation records the steps wrote, by id: the
	// target calls that follow the commit are built from them instead of
	// reading them back.
	records map[string]*store.InvocationRecord
}

// committed is what a committed transaction's steps did: their actions,
// and the invocation records they wrote.
type committed struct {
	acts    []statemachine.Action
	records map[string]*store.InvocationRecord
	// disabled is the reason the transaction disabled the job for, if it
	// did.
	disabled *statemachine.Reason
	// state is the job's state as the transaction committed it.
	state statemachine.JobState
	// notices are the transitions to tell people of, recorded in their
	// invocations' logs by the transaction.
	notices []Notice
	// objective is the job's objectives, the server's defaults filled in.
	objective slo.Objective
}

// update runs fn in a transaction on the job and commits what its steps
// wrote; then it posts the tasks they enqueued and tells the observer. It
// returns the steps' actions and the invocation records they wrote; the
// actions that call a target are the caller's to carry out, now that the
// writes recording them have committed.
func (e *Engine) update(ctx context.Context, jobID string, fn func(*jobTx) error) (committed, error) {
	var c committed
	tasks, err := e.store.Update(ctx, jobID, e.txFunc(jobID, fn, &c))
	return e.afterUpdate(ctx, jobID, c, tasks, err)
}

// updateLater is update, returning once the transaction is submitted if
// the store is a store.Submitter; wait reports what update would have.
// Without a Submitter it updates at once.
func (e *Engine) updateLater(ctx context.Context, jobID string, fn func(*jobTx) error) (wait func() (committed, error)) {
	sub, ok := e.store.(store.Submitter)
	if !ok {
		c, err := e.update(ctx, jobID, fn)
		return func() (committed, error) { return c, err }
	}
	c := new(committed)
	submitted := sub.Submit(ctx, jobID, e.txFunc(jobID, fn, c))
	return func() (committed, error) {
		tasks, err := submitted()
		return e.afterUpdate(ctx, jobID, *c, tasks, err)
	}
}

// txFunc is the store's transaction function for update: it runs fn on
// the job and sets *c to what the steps did.
func (e *Engine) txFunc(jobID string, fn func(*jobTx) error, c *committed) func(store.Tx) error {
	return func(tx store.Tx) error {
		*c = committed{}
		// Without its monotonic reading: the machine keeps times derived
		// from now, and a state the engine caches must be the one decoding
		// its stored form would give (jobCache).
		jt := &jobTx{e: e, tx: tx, now: e.opts.Now().Round(0)}
		if err := jt.load(jobID); err != nil {
			return err
		}
		if err := fn(jt); err != nil {
			return err
		}
		if jt.job == nil {
			return store.ErrNotFound
		}
		notices, err := jt.notices()
		if err != nil {
			return err
		}
		changed, err := jt.save()
		if err != nil {
			return err
		}
		if !changed {
			return errUnchanged
		}
		*c = committed{acts: jt.actions, records: jt.records, state: jt.m, notices: notices}
		if jt.def != nil {
			c.objective = e.Objective(jt.def)
		}
		if r := jt.m.Reason; jt.m.State == statemachine.Disabled && (jt.loaded.State != statemachine.Disabled || jt.loaded.Reason.Kind != r.Kind) {
			c.disabled = &r
		}
		return nil
	}
}

// afterUpdate reads the outcome of update's transaction: what it committed,
// c, with the tasks to post, or the error it failed with.
func (e *Engine) afterUpdate(ctx context.Context, jobID string, c committed, tasks []task.Task, err error) (committed, error) {
	if errors.Is(err, errUnchanged) {
		return committed{}, nil
	}
	if err != nil {
		return committed{}, err
	}
	if len(tasks) > 0 {
		if err := e.queue.Post(ctx, tasks); err != nil {
			// Nothing is lost: the job's WatchdogTimerTs committed with them.
			e.opts.Logger.Warn("posting tasks failed; the watchdog will re-issue them", "job", jobID, "err", err)
		}
	}
	e.observe(jobID, c.acts)
	e.judge(jobID, c)
	if o := e.opts.Observer; o != nil && c.disabled != nil {
		o.Disabled(jobID, *c.disabled)
	}
	if so, ok := e.opts.Observer.(StateObserver); ok {
		so.Settled(jobID, c.state)
	}
	e.deliver(ctx, c.notices)
	return c, nil
}

func (jt *jobTx) load(jobID string) error {
	job, err := jt.tx.Job()
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	jt.job = job
	switch s, stored, err := loadState(job); {
	case asPermanent(err) != nil:
		jt.stateErr = err
	case err != nil:
		return err
	default:
		jt.m, jt.health, jt.trail = s.m, s.health, s.audit
		jt.loaded, jt.stored = s.m, stored
	}
	if err := jt.setDefinition(job.Definition); asPermanent(err) != nil {
		jt.defErr = err
	} else if err != nil {
		return err
	}
	return nil
}

func (jt *jobTx) setDefinition(encoded []byte) error {
	def, sched, err := jt.e.cache.definition(jt.job.ID, encoded)
	if err != nil {
		return err
	}
	jt.job.Definition, jt.def, jt.sched, jt.defErr = encoded, def, sched, nil
	return nil
}

// step runs one machine step and makes the writes its actions ask for.
func (jt *jobTx) step(ev statemachine.Event) error {
	if jt.job == nil {
		return store.ErrNotFound
	}
	if jt.stateErr != nil {
		return jt.stateErr
	}
	if jt.defErr != nil && !jt.idle() {
		return jt.defErr
	}
	return jt.run(ev)
}

// run runs one machine step on a job whose state was read; without a
// usable definition the machine has no schedule and a zero policy.
func (jt *jobTx) run(ev statemachine.Event) error {
	m := statemachine.Machine{
		JobID:    jt.job.ID,
		Now:      jt.now,
		Config:   jt.e.opts.Config,
		NewNonce: jt.e.opts.NewNonce,
		Job:      jt.m,
	}
	var lookupErr error
	m.Recorded = func(ids []string) []bool {
		has, err := jt.tx.HasInvocations(ids)
		if err != nil {
			lookupErr = err
			// None runs; the transaction fails below.
			has = make([]bool, len(ids))
			for i := range has {
				has[i] = true
			}
		}
		return has
	}
	if jt.defErr == nil {
		m.Schedule, m.Policy = jt.sched, jt.def.Policy
	}
	if err := m.Step(ev); err != nil {
		return err
	}
	if lookupErr != nil {
		return lookupErr
	}
	if _, tick := ev.(statemachine.Tick); tick && jt.m.State == statemachine.Paused && m.Job.State != statemachine.Paused {
		// The trail has who paused the job and until when; it says
		// too that the pause ended then, as a person's resume would.
		jt.audit(AuditEntry{By: Itself, Action: ActionResume, Reason: "the pause ended as asked, at " + jt.m.PausedUntil.UTC().Format(time.RFC3339)})
	}
	jt.m = m.Job
	for _, a := range m.Actions {
		if err := jt.write(a); err != nil {
			return err
		}
	}
	jt.actions = append(jt.actions, m.Actions...)
	return nil
}

func (jt *jobTx) write(a statemachine.Action) error {
	id := jt.job.ID
	switch a := a.(type) {
	case statemachine.TickLater:
		return jt.tx.Enqueue(task.Task{Kind: task.TickLater, JobID: id, Nonce: a.Nonce, ETA: a.At})
	case statemachine.StartInvocation:
		return jt.tx.Enqueue(task.Task{Kind: task.StartInvocation, JobID: id, Nonce: a.Nonce, ETA: a.At, Invocation: a.Invocation, Attempt: a.Attempt})
	case statemachine.PollLater:
		return jt.tx.Enqueue(task.Task{Kind: task.PollInvocation, JobID: id, Nonce: a.Nonce, ETA: a.At, Invocation: a.Invocation, Attempt: a.Attempt})
	case statemachine.Record:
		return jt.record(a)
	case statemachine.RecordSkipped:
		return jt.recordSkipped(a)
	case statemachine.Launch, statemachine.Resolve, statemachine.Check, statemachine.AbortTarget:
		return nil // calls, made by carryOut once this transaction committed
	}
	panic(fmt.Sprintf("engine: unknown action %T", a))
}

func (jt *jobTx) record(a statemachine.Record) error {
	inv, err := jt.tx.Invocation(a.ID)
	if err == nil && a.Status == statemachine.StatusQueued {
		// An occurrence becomes an invocation once. The machine never
		// does this; if it ever did, failing the transaction is what keeps
		// the occurrence from launching twice.
		return fmt.Errorf("job %s: occurrence %s is already recorded (%s); not queuing it again", jt.job.ID, a.ID, inv.Status)
	}
	if errors.Is(err, store.ErrNotFound) {
		// The record names the job's definition, stored once for all the
		// invocations that run under it: by Define, or, for a job an
		// older release defined, here.
		hash, err := jt.tx.PutDefinition(jt.job.Definition)
		if err != nil {
			return err
		}
		inv = &store.InvocationRecord{
			JobID: jt.job.ID, ID: a.ID, Occurrence: a.At, Manual: a.Manual, Backfill: a.Backfill,
			Created: jt.now, DefinitionHash: hash,
		}
		if a.Manual {
			inv.TriggeredBy = string(jt.triggerer(a.ID))
		}
	} else if err != nil {
		return err
	}
	inv.Status, inv.Attempt, inv.Message = string(a.Status), a.Attempt, a.Message
	switch {
	case a.Status == statemachine.StatusLaunching:
		inv.Started = jt.now
		if jt.runsWithinCall(inv) {
			// The call this commit allows is the attempt's run, and the
			// machine hears of it only at its end: LAUNCHING all along
			// reads as a launch that is stuck. The machine's state, which
			// recovery goes by, keeps the attempt LAUNCHING: a process
			// that dies in the call leaves it in doubt as any launch.
			inv.Status = string(statemachine.StatusRunning)
		}
	case a.Status.Ended():
		inv.Ended = jt.now
	}
	line := fmt.Sprintf("%s attempt %d %s", jt.now.UTC().Format(time.RFC3339Nano), a.Attempt, a.Status)
	if a.Message != "" {
		line += ": " + a.Message
	}
	inv.Log = appendLog(inv.Log, []byte(line+"\n"), jt.e.opts.LogLimit)
	if out := jt.output[a.ID]; len(out) > 0 && (a.Status.Ended() || a.Status == statemachine.StatusRetrying) {
		inv.Log = appendLog(inv.Log, out, jt.e.opts.LogLimit)
	}
	if err := jt.tx.PutInvocation(inv); err != nil {
		return err
	}
	if a.Status == statemachine.StatusLaunching {
		if err := jt.scheduleLongRun(a.ID, a.Attempt); err != nil {
			return err
		}
	}
	if jt.records == nil {
		jt.records = map[string]*store.InvocationRecord{}
	}
	jt.records[a.ID] = inv
	return nil
}

// runsWithinCall reports whether an invocation's target runs its attempts
// within the call (targets.Synchronous), by the definition the invocation
// runs under. That is the job's, cached, but for a retry under a
// definition since replaced: such an attempt reads LAUNCHING, as every
// launch once did, rather than cost a read in the transaction.
func (jt *jobTx) runsWithinCall(inv *store.InvocationRecord) bool {
	def, ok := jt.e.cache.named(jt.job.ID, inv.DefinitionHash)
	return ok && jt.e.runsWithinCall(def.Target)
}

func (jt *jobTx) recordSkipped(a statemachine.RecordSkipped) error {
	msg := fmt.Sprintf("skipped: %s", a.Reason)
	if a.Count > 1 {
		msg = fmt.Sprintf("%d occurrences skipped: %s", a.Count, a.Reason)
	}
	if a.Note != "" {
		msg += " (" + a.Note + ")"
	}
	if _, err := jt.tx.Invocation(a.ID); err == nil {
		// Never overwrite a record; the machine does not produce this.
		return fmt.Errorf("job %s: occurrence %s was already recorded; not recording it as %s", jt.job.ID, a.ID, a.Reason)
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	inv := &store.InvocationRecord{
		JobID: jt.job.ID, ID: a.ID, Occurrence: a.First, Last: a.Last, Count: a.Count,
		Manual: a.Manual, Status: string(statemachine.StatusSkipped), Message: msg, Reason: string(a.Reason),
		Created: jt.now, Ended: jt.now,
	}
	if a.Manual {
		inv.TriggeredBy = string(jt.triggerer(a.ID))
	}
	return jt.tx.PutInvocation(inv)
}

// save stores the job if anything changed, and reports whether it did.
func (jt *jobTx) save() (bool, error) {
	if jt.stateErr != nil {
		return false, jt.stateErr
	}
	s := jobState{m: jt.m, health: jt.health, audit: jt.trail}
	encoded, err := encodeJobState(s)
	if err != nil {
		return false, err
	}
	d := digestOf(encoded)
	if len(jt.actions) == 0 && d == jt.stored {
		return false, nil
	}
	jt.job.EncodedState, jt.job.Memo = encoded, &stateMemo{encoded: d, s: pack(s.clone())}
	jt.job.State = string(jt.m.State)
	jt.job.WatchdogTimerTs = jt.m.WatchdogTimerTs
	return true, jt.tx.PutJob(jt.job)
}

// observe tells the observer what the committed actions did.
func (e *Engine) observe(jobID string, acts []statemachine.Action) {
	o := e.opts.Observer
	if o == nil {
		return
	}
	for _, a := range acts {
		switch a := a.(type) {
		case statemachine.Record:
			if a.Status.Ended() {
				o.Ended(jobID, a.Status)
			}
		case statemachine.RecordSkipped:
			o.Skipped(jobID, a.Reason, a.Count)
		}
	}
}
