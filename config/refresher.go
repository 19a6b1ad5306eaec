package config

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/target"
	"golang.org/x/sync/semaphore"
)

// Refresher keeps the engine running what a config directory says: each
// pass re-reads the directory, applies the projects whose files changed,
// and disables the jobs of projects whose files are gone. A project whose
// new revision is invalid keeps running its last good one, and the error is
// written in its record in the store (engine.RecordConfigError), where
// every instance reads it (Status). Projects are applied side by side,
// each on its own: a project of 100,000 jobs, or one whose apply is slow,
// holds no other project up, and a pass does not wait for an apply an
// earlier pass started. Only parsing is bounded: at most ParseBudget bytes of config
// are parsed at once, since the YAML parser takes about a hundred times a
// file's size in memory.
type Refresher struct {
	dir     string
	engine  *engine.Engine
	store   store.Store // where the projects that have jobs are listed
	opts    RefresherOptions
	parsing *semaphore.Weighted // bytes of config being parsed

	mu       sync.Mutex // one pass at a time; guards projects
	listed   bool       // the projects already in the store are known
	projects map[string]*projectState
}

// RefresherOptions configure a Refresher.
type RefresherOptions struct {
	Targets map[string]target.Target // the kinds the server runs
	// Now is the clock. Required: the refresher never reads the wall clock.
	Now    func() time.Time
	Logger *slog.Logger // nil discards
	// Ticks asks Run for a refresh at each value: every --config-refresh
	// and at SIGHUP in the embedded shape, none in the cloud shape (cron
	// calls Refresh).
	Ticks <-chan time.Time
	// ParseBudget is how many bytes of config files may be parsed at
	// once; 0 means MaxFileSize. A file larger than the budget is parsed
	// alone.
	ParseBudget int64
}

// NewRefresher returns a refresher of the config directory dir, which has
// eng run what it says; st is eng's store. It panics without opts.Now.
func NewRefresher(dir string, eng *engine.Engine, st store.Store, opts RefresherOptions) *Refresher {
	if opts.Now == nil {
		panic("config.NewRefresher: RefresherOptions.Now is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ParseBudget <= 0 {
		opts.ParseBudget = MaxFileSize
	}
	return &Refresher{dir: dir, engine: eng, store: st, opts: opts, parsing: semaphore.NewWeighted(opts.ParseBudget)}
}

// projectState is what the refresher remembers of a project between passes.
type projectState struct {
	// seen is the revision of the bytes last read and either applied or
	// found invalid: the same bytes again need nothing. A revision that
	// failed to apply is not seen, so the next pass tries it again.
	seen string
	// busy: an apply (or removal) of the project is under way. Passes leave
	// the project to it; the first pass after it ends takes what the file
	// holds then.
	busy bool
}

// Status is where a project's config stands, as its record in the store
// says.
type Status struct {
	Project  string
	File     string    // its config file
	Revision string    // the revision running (the last good one); "" if none
	LoadedAt time.Time // when Revision was applied
	Jobs     int       // jobs in Revision
	// Error is why the file's newest revision is not running, or was
	// applied only in part (it is tried again at the next refresh); ""
	// when the newest revision runs.
	Error   string
	ErrorAt time.Time
}

func statusOf(p engine.Project) Status {
	return Status{Project: p.ID, File: p.File, Revision: p.Revision, LoadedAt: p.AppliedAt, Jobs: p.Jobs, Error: p.Error, ErrorAt: p.ErrorAt}
}

// revision names a file's content.
func revision(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Refresh re-reads the directory once, brings every project whose file
// changed in line, and returns when the applies it started have ended (an
// apply that an earlier pass of Run started and that is still under way is
// left to it). It returns an error, and changes nothing, only when the
// directory cannot be read or the store cannot list the projects it had;
// a project's own errors are in its record (Status) and the log.
func (r *Refresher) Refresh(ctx context.Context) error {
	var applies sync.WaitGroup
	defer applies.Wait()
	return r.pass(ctx, &applies)
}

// pass reads the directory and starts, in applies, an apply of each project
// whose file changed and a removal of each whose file is gone, unless one
// is under way already.
func (r *Refresher) pass(ctx context.Context, applies *sync.WaitGroup) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	files, err := ReadDir(r.dir)
	if err != nil {
		return fmt.Errorf("reading the config directory: %w", err)
	}
	if err := r.listProjects(ctx); err != nil {
		return err
	}
	present := map[string]bool{}
	for _, f := range files {
		present[f.Project] = true
		ps := r.projects[f.Project]
		if ps == nil {
			ps = &projectState{}
			r.projects[f.Project] = ps
		}
		if ps.busy {
			continue
		}
		if f.Err != nil {
			ps.seen = "" // whatever the file holds once it can be read is news
			r.failed(ctx, f.Project, f.Path, f.Err)
			continue
		}
		if rev := revision(f.Data); rev != ps.seen {
			ps.busy = true
			applies.Go(func() { r.apply(ctx, f, rev, ps) })
		}
	}
	for id, ps := range r.projects {
		if !present[id] && !ps.busy {
			ps.busy = true
			applies.Go(func() { r.remove(ctx, id, ps) })
		}
	}
	return nil
}

// listProjects learns, once, the projects that have jobs or a config
// status in the store, so that a file removed while the server was down
// still has its jobs disabled and its status cleared.
func (r *Refresher) listProjects(ctx context.Context) error {
	if r.projects == nil {
		r.projects = map[string]*projectState{}
	}
	if r.listed {
		return nil
	}
	for p := (store.Page{Limit: 1000}); ; {
		jobs, next, err := r.store.Jobs(ctx, "", p)
		if err != nil {
			return fmt.Errorf("listing the projects in the store: %w", err)
		}
		for _, j := range jobs {
			id := engine.ProjectOf(j.ID)
			if r.projects[id] == nil {
				r.projects[id] = &projectState{}
			}
		}
		if next == "" {
			break
		}
		p.Cursor = next
	}
	records, err := r.engine.Projects(ctx)
	if err != nil {
		return fmt.Errorf("listing the projects in the store: %w", err)
	}
	for id, p := range records {
		if p.HasConfig() && r.projects[id] == nil {
			r.projects[id] = &projectState{}
		}
	}
	r.listed = true
	return nil
}

// apply parses a project's file and has the engine run it. It runs beside
// the other projects' applies, without the refresher's lock.
func (r *Refresher) apply(ctx context.Context, f File, rev string, ps *projectState) {
	seen := ""
	defer func() {
		r.mu.Lock()
		ps.seen, ps.busy = seen, false
		r.mu.Unlock()
	}()
	p, err := r.parse(ctx, f)
	if err != nil {
		if ctx.Err() == nil { // the bytes are at fault, not a stop
			seen = rev
		}
		r.failed(ctx, f.Project, f.Path, err)
		return
	}
	if err := r.engine.ApplyProject(ctx, p.ID, engine.Revision{ID: rev, File: f.Path, Jobs: p.Jobs, Grants: p.Grants}); err != nil {
		r.failed(ctx, f.Project, f.Path, err)
		return
	}
	seen = rev
	r.opts.Logger.Info("config applied", "project", p.ID, "file", f.Path, "revision", rev[:12], "jobs", len(p.Jobs))
}

// parse parses a project's file within the parse budget; it fails only
// for what the file holds, or for a stop while it waits.
func (r *Refresher) parse(ctx context.Context, f File) (*Project, error) {
	weight := min(max(int64(len(f.Data)), 1), r.opts.ParseBudget)
	if err := r.parsing.Acquire(ctx, weight); err != nil {
		return nil, err
	}
	defer r.parsing.Release(weight)
	return Parse(f.Path, f.Data, r.opts.Targets)
}

// remove disables the jobs of a project whose file is gone, and forgets it
// once that is done. Its record stays, with no revision, grants or error:
// the project has no config status, and only administrators see it.
func (r *Refresher) remove(ctx context.Context, project string, ps *projectState) {
	err := r.engine.ApplyProject(ctx, project, engine.Revision{})
	r.mu.Lock()
	ps.busy = false
	if err == nil && r.projects[project] == ps {
		delete(r.projects, project)
	}
	r.mu.Unlock()
	if err != nil {
		r.failed(ctx, project, "", err)
		return
	}
	r.opts.Logger.Info("config removed; its jobs are disabled", "project", project)
}

// failed records why a project's newest revision is not running in its
// record; the revision that is running, if any, stays as it was. A stop is
// no fault of the revision's and is only logged.
func (r *Refresher) failed(ctx context.Context, project, file string, err error) {
	r.opts.Logger.Error("config not applied; the last good revision keeps running", "project", project, "err", err)
	if ctx.Err() != nil {
		return
	}
	if rerr := r.engine.RecordConfigError(ctx, project, file, err.Error(), r.opts.Now()); rerr != nil {
		r.opts.Logger.Error("recording a project's config error failed", "project", project, "err", rerr)
	}
}

// Status returns where every project's config stands, by project id, as
// the store says: whichever instance refreshed it.
func (r *Refresher) Status(ctx context.Context) ([]Status, error) {
	records, err := r.engine.Projects(ctx)
	if err != nil {
		return nil, err
	}
	out := []Status{}
	for _, id := range slices.Sorted(maps.Keys(records)) {
		if p := records[id]; p.HasConfig() {
			out = append(out, statusOf(p))
		}
	}
	return out, nil
}

// ProjectStatus returns where one project's config stands; ok is false
// for a project with no revision running and no error recorded.
func (r *Refresher) ProjectStatus(ctx context.Context, project string) (s Status, ok bool, err error) {
	p, _, err := r.engine.Project(ctx, project)
	if err != nil || !p.HasConfig() {
		return Status{}, false, err
	}
	return statusOf(p), true, nil
}

// Run makes a pass at once, then one at each of RefresherOptions.Ticks,
// until ctx is done or Ticks is closed; then it waits for the applies
// under way, which ctx's end cuts short. A pass does not wait for the
// applies it starts, so a slow project delays no later pass. A pass that
// fails changes nothing and is logged; the next tick tries again, so Run
// returns nil.
func (r *Refresher) Run(ctx context.Context) error {
	var applies sync.WaitGroup
	defer applies.Wait()
	for {
		if err := r.pass(ctx, &applies); err != nil {
			r.opts.Logger.Error("config refresh failed; nothing changed", "dir", r.dir, "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-r.opts.Ticks:
			if !ok {
				return nil
			}
		}
	}
}
