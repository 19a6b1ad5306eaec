package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// Job is one job as its project's config lists it.
type Job struct {
	ID         string // "<project>/<job>"
	Definition Definition
	// Disabled: the config says `disabled: true`. The job is DISABLED,
	// with its history kept; one that never existed is not created.
	Disabled bool
}

// Revision is one valid revision of a project's config, as the engine
// runs it.
type Revision struct {
	// ID names the revision (a commit, or a hash of the file); "" applies
	// no revision: the project's config is gone.
	ID     string
	Jobs   []Job
	Grants []access.RoleGrant
	// File is the config file the revision was read from, for the
	// project's record.
	File string
	// Commit is the commit the revision was read at; nil for a
	// directory's.
	Commit *Commit
	// Content is the hash of the file's bytes, by which a later read of
	// the same bytes at a newer commit is known for the revision running.
	Content string
}

// ApplyProject makes a project's jobs what one revision of its config
// lists (LUCI's UpdateProjectJobs): new jobs are created, changed ones
// redefined (a running invocation finishes under its old definition), and
// the jobs the config no longer lists, or lists as disabled, are DISABLED
// with their history kept. What "changed" means is Define's rule. The
// error names every job that could not be brought in line; the others are
// applied all the same.
//
// Only once every job is in line is the project's record written with
// the revision, its grants and its status (file, when, how many jobs; any
// earlier error cleared), so the grants in force are always those of
// a revision applied whole: one that failed in part keeps the previous
// revision's, and is applied again at the next refresh. The record keeps
// what the revision changed (Changes); applying the revision running
// again keeps the changes it made when it was first applied.
func (e *Engine) ApplyProject(ctx context.Context, project string, rev Revision) error {
	jobs := rev.Jobs
	if project == "" {
		// The store lists every job for the empty project.
		return errors.New("a project needs an id")
	}
	stored, err := e.projectJobs(ctx, project)
	if err != nil {
		return err
	}
	// Each job is its own transaction: run them side by side, so that
	// they share commits, and read the outcomes in the config's order.
	type outcome struct {
		changed, had bool
		err          error
	}
	listed := make([]outcome, len(jobs))
	was := make([]listedJob, len(jobs))
	for i, j := range jobs {
		was[i], listed[i].had = stored[j.ID]
		delete(stored, j.ID)
	}
	// Defined in the order of their ids, which is the store's: a commit
	// of jobs that lie together writes fewer pages (see pipelined).
	byID := make([]int, len(jobs))
	for i := range byID {
		byID[i] = i
	}
	slices.SortFunc(byID, func(a, b int) int { return strings.Compare(jobs[a].ID, jobs[b].ID) })
	e.pipelined(ctx, len(jobs), applyDepth, func(k int) (finish func()) {
		i := byID[k]
		j, o := jobs[i], &listed[i]
		switch {
		case ProjectOf(j.ID) != project:
			o.err = fmt.Errorf("not a job of project %s", project)
		case j.Disabled && o.had:
			o.changed, o.err = e.disable(ctx, j.ID, statemachine.Reason{Kind: statemachine.ReasonDisabledInConfig})
		case j.Disabled:
		default:
			def := j.Definition
			def.Revision = rev.ID
			if o.had && e.runs(j.ID, def, was[i]) {
				return nil
			}
			wait := e.defining(ctx, j.ID, def, !o.had)
			return func() { o.changed, o.err = wait() }
		}
		return nil
	})
	var errs []error
	changes := &Changes{}
	for i, j := range jobs {
		o := listed[i]
		switch {
		case stoppedBy(ctx, o.err):
			// In flight when the apply stopped: said once, below.
		case o.err != nil:
			errs = append(errs, fmt.Errorf("job %s: %w", j.ID, o.err))
		case !o.changed:
		case j.Disabled:
			note(&changes.Removed, &changes.RemovedCount, jobName(j.ID))
		case !o.had:
			note(&changes.Added, &changes.AddedCount, jobName(j.ID))
		default:
			note(&changes.Changed, &changes.ChangedCount, jobName(j.ID))
			if changes.ChangedCount <= MaxChanges && len(was[i].definition) > 0 {
				if changes.Before == nil {
					changes.Before = map[string]string{}
				}
				changes.Before[jobName(j.ID)] = store.DefinitionHash(was[i].definition)
			}
		}
	}
	// The jobs the revision no longer lists, unless the apply stopped.
	gone := slices.Sorted(maps.Keys(stored))
	removed := make([]outcome, len(gone))
	if ctx.Err() == nil {
		e.parallel(ctx, len(gone), func(i int) {
			removed[i].changed, removed[i].err = e.disable(ctx, gone[i], statemachine.Reason{Kind: statemachine.ReasonRemovedFromConfig})
		})
	}
	for i, id := range gone {
		if err := removed[i].err; err != nil && !stoppedBy(ctx, err) {
			errs = append(errs, fmt.Errorf("job %s: %w", id, err))
		}
		if removed[i].changed {
			note(&changes.Removed, &changes.RemovedCount, jobName(id))
		}
	}
	if ctx.Err() != nil {
		errs = append(errs, fmt.Errorf("stopped before the revision was applied whole: %w", context.Cause(ctx)))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	p := Project{ID: project, Revision: rev.ID, AppliedAt: e.opts.Now().Round(0).UTC(), Grants: rev.Grants,
		File: rev.File, Jobs: len(rev.Jobs), Commit: rev.Commit, Content: rev.Content, Changes: changes}
	err = e.store.UpdateProject(ctx, project, func(old *store.ProjectRecord) (*store.ProjectRecord, error) {
		p.Changes = changes
		if old != nil {
			// A refresh applies the revision running again, changing
			// nothing: what the console shows is what it changed when
			// it came. A record this release cannot read is replaced.
			if was, derr := decodeProject(project, old.Encoded); derr == nil && was.Revision == rev.ID && rev.ID != "" && was.Changes != nil {
				p.Changes = was.Changes
			}
		}
		encoded, err := encodeProject(p)
		if err != nil {
			return nil, err
		}
		return &store.ProjectRecord{ID: project, Encoded: encoded}, nil
	})
	if err != nil {
		return fmt.Errorf("project %s: its jobs are applied, but recording its revision and roles failed: %w", project, err)
	}
	return nil
}

// applyWorkers is how many goroutines apply jobs at once, across all the
// revisions being applied: not per revision, since the config refresher
// applies every project at once, and each worker keeps the stack its
// transactions grew (16 KiB). With a store.Submitter each keeps
// applyDepth of its jobs' transactions in flight, 2,048 in all: enough
// to fill the store's commits when a large config is defined. With the
// workers taken in turn (pipelined), 128 keeping 16 each defined 100,000
// jobs in 6.6-7.4 s against 9-11 s keeping 8, at the same peak for a
// first start of 10,000 jobs (at 100,000 jobs perhaps 15 MiB more, within
// the noise); 32 each defined no faster, and that peak grew
// (docs/benchmarks.md, "Apply workers"). Before the turn, 512 workers
// waiting for one transaction each took 14-16 s, and each transaction in
// flight holds about 2.5 KB until it commits.
const (
	applyWorkers = 128
	applyDepth   = 16
)

// parallel calls fn(i) for every i in [0, n), on workers that each hold
// one of the engine's applyWorkers slots, and for none once ctx is done.
func (e *Engine) parallel(ctx context.Context, n int, fn func(i int)) {
	e.pipelined(ctx, n, 1, func(i int) func() {
		fn(i)
		return nil
	})
}

// pipelined is parallel for work started by start(i) and finished by the
// function it returns (nil: finished already): each worker has up to
// depth started before it finishes the oldest, and finishes all it
// started, even once ctx is done.
//
// Calls take their workers in turn, the first to come taking every slot it
// can use before the next takes any: its jobs are then the ones in flight,
// and consecutive jobs of one project lie together in the store, where a
// commit of jobs spread over every project being applied at once writes a
// page, and splits it, in as many places. Defining 100,000 jobs of 100
// projects, 8 in flight a worker, took 13 s with the slots shared and
// 10 s taken in turn (docs/benchmarks.md, "Apply workers"). The calls
// are served first come, first served: one waits while every slot is busy
// or promised to an earlier call, so a small project's apply can wait for
// a large one's jobs to be taken, as it could for the slots before.
func (e *Engine) pipelined(ctx context.Context, n, depth int, start func(i int) (finish func())) {
	var next atomic.Int64
	var wg sync.WaitGroup
	defer wg.Wait()
	select {
	case e.workerTurn <- struct{}{}:
	case <-ctx.Done():
		return
	}
	defer func() { <-e.workerTurn }()
	for range min(n, applyWorkers) {
		if int(next.Load()) >= n {
			break // the workers started have taken every job
		}
		select {
		case e.applying <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-e.applying }()
			var started []func()
			for i := int(next.Add(1)) - 1; i < n && ctx.Err() == nil; i = int(next.Add(1)) - 1 {
				if finish := start(i); finish != nil {
					started = append(started, finish)
				}
				if len(started) == depth {
					started[0]()
					started = append(started[:0], started[1:]...)
				}
			}
			for _, finish := range started {
				finish()
			}
		})
	}
}

// stoppedBy reports whether err is ctx's own, ctx being done.
func stoppedBy(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err())
}

// projectJobs returns the ids of a project's jobs in the store.
func (e *Engine) projectJobs(ctx context.Context, project string) (map[string]listedJob, error) {
	out := map[string]listedJob{}
	for p := (store.Page{Limit: store.MaxLimit}); ; {
		jobs, next, err := e.store.Jobs(ctx, project, p)
		if err != nil {
			return nil, fmt.Errorf("project %s: listing its jobs: %w", project, err)
		}
		for _, j := range jobs {
			out[j.ID] = listedJob{definition: j.Definition, disabled: j.State == string(statemachine.Disabled)}
		}
		if next == "" {
			return out, nil
		}
		p.Cursor = next
	}
}

// listedJob is what applying a revision needs of a job as listed.
type listedJob struct {
	definition []byte // as stored
	disabled   bool
}

// runs reports whether the job, as listed, already runs def: not
// DISABLED, and its stored definition one this engine can run and equal
// to def by Define's rule. Define would change nothing, so applying a
// revision again, as every start does, costs no transaction for the jobs
// it leaves as they are. Any other case is Define's to judge.
func (e *Engine) runs(jobID string, def Definition, l listedJob) bool {
	if l.disabled || e.check(jobID, &def) != nil {
		return false
	}
	stored, _, err := e.cache.definition(jobID, l.definition)
	return err == nil && stored.Equal(&def)
}

// Define creates the job or changes its definition. A definition equal to
// the stored one, by value, changes nothing — unless the job is DISABLED
// by its config (removed, or `disabled: true`), which listing it again
// undoes, or because its stored definition could not be used, which a
// definition this release can run undoes. A job disabled for another
// reason (auto-disabled, an unreadable state) stays so until its
// definition changes.
func (e *Engine) Define(ctx context.Context, jobID string, def Definition) error {
	_, err := e.define(ctx, jobID, def, false)
	return err
}

// define is Define, reporting whether it created or redefined the job.
// listedAbsent: the caller has just listed the job's project without it,
// so the store need not read the job again (store.NewJob).
func (e *Engine) define(ctx context.Context, jobID string, def Definition, listedAbsent bool) (changed bool, err error) {
	return e.defining(ctx, jobID, def, listedAbsent)()
}

// defining is define, returning once the job's transaction is submitted
// (Engine.updateLater); wait reports what define would have.
func (e *Engine) defining(ctx context.Context, jobID string, def Definition, listedAbsent bool) (wait func() (changed bool, err error)) {
	if err := e.check(jobID, &def); err != nil {
		return func() (bool, error) { return false, err }
	}
	encoded, err := encodeDefinition(def)
	if err != nil {
		return func() (bool, error) { return false, err }
	}
	uctx := ctx
	if listedAbsent {
		uctx = store.NewJob(ctx)
	}
	var changed bool
	fn := func(jt *jobTx) error {
		changed = false // a transaction tried again starts over
		switch {
		case jt.job == nil:
			jt.job = &store.JobRecord{ID: jobID, Project: ProjectOf(jobID)}
		case jt.stateErr != nil:
			return jt.stateErr // updateOrDisable resets the state, then asks again
		case jt.defErr != nil:
			// Nothing can be settled under a definition that cannot be
			// used: Broken disables the job without it.
			if err := jt.run(statemachine.Broken{Reason: asPermanent(jt.defErr).reason}); err != nil {
				return err
			}
		case jt.def.Equal(&def) && !(jt.m.State == statemachine.Disabled && (jt.m.Reason.FromConfig() || jt.m.Reason.FromDefinition())):
			return nil
		default:
			// What fell due under the old definition is settled under it.
			if err := jt.step(statemachine.Redefining{}); err != nil {
				return err
			}
		}
		changed = true
		if err := jt.setDefinition(encoded); err != nil {
			return err
		}
		// Stored with the revision that brings it, for the invocations
		// that will run under it to name.
		if _, err := jt.tx.PutDefinition(encoded); err != nil {
			return err
		}
		return jt.step(statemachine.Defined{})
	}
	submitted := e.updateLater(uctx, jobID, fn)
	return func() (bool, error) {
		c, err := submitted()
		if c, err = e.orDisable(uctx, jobID, fn, c, err); err != nil {
			return false, err
		}
		return changed, e.carryOut(ctx, jobID, c)
	}
}

// Disable makes the job DISABLED for reason, keeping its history. Queued
// invocations are aborted; running ones finish. A job already DISABLED
// keeps the reason it has.
func (e *Engine) Disable(ctx context.Context, jobID string, reason statemachine.Reason) error {
	_, err := e.disable(ctx, jobID, reason)
	return err
}

// disable is Disable, reporting whether the job was not DISABLED before.
func (e *Engine) disable(ctx context.Context, jobID string, reason statemachine.Reason) (disabled bool, err error) {
	c, err := e.updateOrDisable(ctx, jobID, func(jt *jobTx) error {
		disabled = false
		if jt.job != nil && jt.stateErr == nil && jt.m.State == statemachine.Disabled {
			return nil
		}
		disabled = true
		return jt.step(statemachine.Removed{Reason: reason})
	})
	if err != nil {
		return false, err
	}
	return disabled, e.carryOut(ctx, jobID, c)
}
