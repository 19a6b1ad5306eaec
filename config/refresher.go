package config

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/store"
	"github.com/sundial-cron/sundial/targets"
	"golang.org/x/sync/semaphore"
)

// Refresher keeps the engine running what its config sources say (a
// directory, or git repos): each pass reads every source, applies the
// projects whose files changed, and disables the jobs of projects whose
// files are gone. A project whose new revision is invalid keeps running
// its last good one, and the error is written in its record in the store
// (engine.RecordConfigError), where every instance reads it (Status). A
// source that cannot be read changes none of its projects; neither does a
// commit that would remove every project of its repo (the safety valve
// against a wrong path or an emptied branch), nor one older than the
// commit a project runs (a force-push back). Projects are applied side by
// side, each on its own: a project of 100,000 jobs, or one whose apply is
// slow, holds no other project up, and a pass does not wait for an apply
// an earlier pass started. Only parsing is bounded: at most ParseBudget
// bytes of config are parsed at once (a file dense in YAML items weighing
// more than its bytes), since the YAML parser takes about a hundred times
// a file's size in memory.
type Refresher struct {
	sources []Source
	list    *ProjectList // when not nil, the sources come from it at each pass
	engine  *engine.Engine
	store   store.Store // where the projects that have jobs are listed
	opts    RefresherOptions
	parsing *semaphore.Weighted // bytes of config being parsed

	mu       sync.Mutex // one pass at a time; guards projects and calendars
	listed   bool       // the projects already in the store are known
	projects map[string]*projectState
	// calendars are the last good shared calendars: opts.Calendars, then
	// each good read of opts.CalendarsPath.
	calendars *SharedCalendars
}

// RefresherOptions configure a Refresher.
type RefresherOptions struct {
	Targets map[string]targets.Target // the kinds the server runs
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
	// Source names where the configs come from, as the server claimed the
	// database for it (engine.ClaimConfigSource): a pass finding the
	// database claimed by another source changes nothing. "": no check.
	Source string
	// Calendars are the calendars the server shares with every project
	// (serve --calendars); nil for none.
	Calendars *SharedCalendars
	// CalendarsPath is where Calendars were read (LoadCalendars); ""
	// when they come from nowhere else. Each pass reads it again, so an
	// operator's change to the shared calendars applies the projects
	// that draw on them at the next refresh, as a change to the .ics
	// files beside a config does. Calendars that no longer read keep the
	// last good ones running, and the pass returns why.
	CalendarsPath string
}

// NewRefresher returns a refresher of the config directory dir, which has
// eng run what it says; st is eng's store. It panics without opts.Now.
func NewRefresher(dir string, eng *engine.Engine, st store.Store, opts RefresherOptions) *Refresher {
	return NewSourceRefresher([]Source{DirSource(dir)}, eng, st, opts)
}

// NewSourceRefresher returns a refresher of sources, each holding its own
// projects: a project found in two is refused in both. It panics without
// opts.Now.
func NewSourceRefresher(sources []Source, eng *engine.Engine, st store.Store, opts RefresherOptions) *Refresher {
	if opts.Now == nil {
		panic("config.NewRefresher: RefresherOptions.Now is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ParseBudget <= 0 {
		opts.ParseBudget = MaxFileSize
	}
	return &Refresher{sources: sources, engine: eng, store: st, opts: opts, parsing: semaphore.NewWeighted(opts.ParseBudget), calendars: opts.Calendars}
}

// NewListRefresher returns a refresher of the projects list names, read
// again at each pass: a project dropped from the list is removed as when
// its file goes, and a refused revision of the list leaves the last good
// one running. It panics without opts.Now.
func NewListRefresher(list *ProjectList, eng *engine.Engine, st store.Store, opts RefresherOptions) *Refresher {
	r := NewSourceRefresher(nil, eng, st, opts)
	r.list = list
	return r
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
	// source is where the project's file was last found; nil until a pass
	// finds it.
	source Source
	// sourceErr is the error of its source last recorded in its record,
	// so that a remote down for an hour writes it once.
	sourceErr string
}

// found is one project's file as a pass read it.
type found struct {
	File
	source Source
	commit *engine.Commit // nil for a directory's
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
	// Commit is the commit Revision was read at; nil for a directory's.
	Commit *engine.Commit
	// ErrorCommit is the commit Error refused; "" for a directory's.
	ErrorCommit string
}

func statusOf(p engine.Project) Status {
	return Status{Project: p.ID, File: p.File, Revision: p.Revision, LoadedAt: p.AppliedAt, Jobs: p.Jobs, Error: p.Error, ErrorAt: p.ErrorAt,
		Commit: p.Commit, ErrorCommit: p.ErrorCommit}
}

// revision names a file's content.
func revision(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Refresh reads the sources once, brings every project whose file
// changed in line, and returns when the applies it started have ended (an
// apply that an earlier pass of Run started and that is still under way is
// left to it). It returns an error when a source cannot be read (or its
// commit is refused whole), which changes none of that source's projects,
// or when the store cannot list the projects it had, which changes
// nothing, or when the shared calendars no longer read (CalendarsPath),
// which leaves the last good ones; a project's own errors are in its
// record (Status) and the log.
func (r *Refresher) Refresh(ctx context.Context) error {
	var applies sync.WaitGroup
	defer applies.Wait()
	return r.pass(ctx, &applies)
}

// Reimport refreshes at once, as Refresh does, and returns the projects
// whose newest revision it refused, each with its error: what a push's
// webhook answers, so the pusher sees a refused commit.
func (r *Refresher) Reimport(ctx context.Context) (refused map[string]string, err error) {
	start := r.opts.Now()
	if err := r.Refresh(ctx); err != nil {
		return nil, err
	}
	statuses, err := r.Status(ctx)
	if err != nil {
		return nil, err
	}
	refused = map[string]string{}
	for _, st := range statuses {
		if st.Error != "" && !st.ErrorAt.Before(start) {
			refused[st.Project] = st.Error
		}
	}
	return refused, nil
}

// pass reads the sources and starts, in applies, an apply of each project
// whose file changed and a removal of each whose file is gone, unless one
// is under way already.
func (r *Refresher) pass(ctx context.Context, applies *sync.WaitGroup) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.opts.Source != "" {
		// Another server took the database over for its own configs
		// (--config-moved): applying or removing anything now would fight
		// it over every project.
		if err := r.engine.CheckConfigSource(ctx, r.opts.Source); err != nil {
			r.opts.Logger.Error("config refresh skipped: nothing applied or removed", "err", err)
			return err
		}
	}
	var errs []error
	if err := r.readCalendars(); err != nil {
		r.opts.Logger.Error("shared calendars refused; the last good ones keep running", "err", err)
		errs = append(errs, err)
	}
	shared := r.calendars
	if r.list != nil {
		sources, err := r.list.Sources(ctx, r.running)
		if sources == nil {
			return err
		}
		if err != nil {
			r.opts.Logger.Error("projects list refused; the last good one keeps running", "err", err)
			errs = append(errs, err)
		}
		r.sources = sources
	}
	snaps := make([]Snapshot, len(r.sources))
	readErrs := make([]error, len(r.sources))
	// Side by side: a repo that hangs until its timeout holds the
	// others' reads up no longer than it takes.
	var reads sync.WaitGroup
	for i, src := range r.sources {
		reads.Go(func() { snaps[i], readErrs[i] = src.Read(ctx) })
	}
	reads.Wait()
	if err := r.listProjects(ctx); err != nil {
		return err
	}
	failed := map[Source]bool{}
	byProject := map[string][]found{}
	for i, src := range r.sources {
		snap, err := snaps[i], readErrs[i]
		if err == nil {
			err = r.checkNotEmptied(src, snap)
		}
		if err != nil {
			errs = append(errs, err)
			failed[src] = true
			r.sourceFailed(ctx, src, err)
			continue
		}
		for _, f := range snap.Files {
			byProject[f.Project] = append(byProject[f.Project], found{File: f, source: src, commit: snap.Commit})
		}
	}
	present := map[string]bool{}
	for project, fs := range byProject {
		present[project] = true
		ps := r.projects[project]
		if ps == nil {
			ps = &projectState{}
			r.projects[project] = ps
		}
		if ps.busy {
			continue
		}
		f := fs[0]
		for _, other := range fs[1:] {
			// Two files of one source are refused by the source itself.
			if other.source != f.source {
				f.Err = fmt.Errorf("project %s is in two config sources (%s and %s): a project is in exactly one place", project, f.source, other.source)
				break
			}
		}
		// A project moved to another source (its entry in a projects list
		// changed) takes that source's commit, older or not, even with the
		// same bytes: commits of two repos say nothing of which is newer.
		moved := ps.source != nil && ps.source != f.source
		if moved {
			ps.seen = ""
		}
		ps.source, ps.sourceErr = f.source, ""
		if f.Err != nil {
			ps.seen = "" // whatever the file holds once it can be read is news
			r.failed(ctx, f.Project, f.Path, f.commit, f.Err)
			continue
		}
		if rev := calendarRevision(f.Data, f.ICS, shared); rev != ps.seen {
			ps.busy = true
			applies.Go(func() { r.apply(ctx, f, shared, rev, ps, moved) })
		}
	}
	for id, ps := range r.projects {
		// A project of a source that could not be read is not gone; nor,
		// while any source failed, is one whose source is not known yet.
		if present[id] || ps.busy || failed[ps.source] || (ps.source == nil && len(failed) > 0) {
			continue
		}
		ps.busy = true
		applies.Go(func() { r.remove(ctx, id, ps) })
	}
	return errors.Join(errs...)
}

// running lists the projects whose records in the store hold a config
// revision.
func (r *Refresher) running(ctx context.Context) ([]string, error) {
	records, err := r.engine.Projects(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the projects in the store: %w", err)
	}
	var out []string
	for id, p := range records {
		if p.Revision != "" {
			out = append(out, id)
		}
	}
	return out, nil
}

// checkNotEmptied refuses a commit that holds none of the projects the
// source had: a wrong path or an emptied branch must not disable them
// all. Removing some of them is an ordinary change.
func (r *Refresher) checkNotEmptied(src Source, snap Snapshot) error {
	if snap.Commit == nil || len(snap.Files) > 0 {
		return nil
	}
	var had []string
	for id, ps := range r.projects {
		if ps.source == src || (ps.source == nil && len(r.sources) == 1) {
			had = append(had, id)
		}
	}
	if len(had) == 0 {
		return nil
	}
	slices.Sort(had)
	return fmt.Errorf("%s: commit %s (%q) holds no project config at all, and would disable every project it had (%s): refused; remove projects in a commit that leaves at least one", src, snap.Commit.SHA[:12], snap.Commit.Subject, strings.Join(had, ", "))
}

// sourceFailed logs why a source could not be read and, for a repo,
// records it in the records of the projects last found there, once per
// error: their running revisions stay as they are. A directory that
// cannot be read is the server's own machine's trouble, for its log.
func (r *Refresher) sourceFailed(ctx context.Context, src Source, err error) {
	r.opts.Logger.Error("config source not read; its projects keep running as they are", "source", src.String(), "err", err)
	if _, ok := src.(DirSource); ok {
		return
	}
	for id, ps := range r.projects {
		if ps.source != src || ps.busy || ps.sourceErr == err.Error() {
			continue
		}
		ps.sourceErr = err.Error()
		r.failed(ctx, id, "", nil, err)
	}
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

// apply parses a project's file with the shared calendars its revision
// rev was computed with, and has the engine run it; moved: the file comes
// from another source than the revision running. It runs beside the
// other projects' applies, without the refresher's lock.
func (r *Refresher) apply(ctx context.Context, f found, shared *SharedCalendars, rev string, ps *projectState, moved bool) {
	seen := ""
	defer func() {
		r.mu.Lock()
		ps.seen, ps.busy = seen, false
		r.mu.Unlock()
	}()
	if err := r.checkForward(ctx, f); err != nil && !moved {
		seen = rev
		r.failed(ctx, f.Project, f.Path, f.commit, err)
		return
	}
	if run, ok := r.unchangedSince(ctx, f, rev); ok && !moved {
		seen = rev
		r.opts.Logger.Info("config unchanged", "project", f.Project, "file", f.Path, "revision", run[:12], "read_at", f.commit.SHA[:12])
		return
	}
	p, err := r.parse(ctx, f.File, shared)
	if err != nil {
		if ctx.Err() == nil { // the bytes are at fault, not a stop
			seen = rev
		}
		r.failed(ctx, f.Project, f.Path, f.commit, err)
		return
	}
	id, commit := rev, engineCommit(f)
	if commit != nil {
		id = commit.SHA
	}
	if err := r.engine.ApplyProject(ctx, p.ID, engine.Revision{ID: id, File: f.Path, Jobs: p.Jobs, Grants: p.Grants, Commit: commit, Content: rev}); err != nil {
		r.failed(ctx, f.Project, f.Path, f.commit, err)
		return
	}
	seen = rev
	r.opts.Logger.Info("config applied", "project", p.ID, "file", f.Path, "revision", id[:12], "jobs", len(p.Jobs))
}

// unchangedSince reports whether the project runs f's very bytes, read at
// an older commit, with no error since: a restart, or a commit that
// changed other files of a shared repo, then changes nothing, and the
// revision stays the commit that last changed the file, not the newest.
// It returns the revision running.
func (r *Refresher) unchangedSince(ctx context.Context, f found, rev string) (string, bool) {
	if f.commit == nil {
		return "", false
	}
	p, ok, err := r.engine.Project(ctx, f.Project)
	if err != nil || !ok || p.Content != rev || p.Commit == nil || p.Error != "" || p.File != f.Path {
		return "", false
	}
	return p.Revision, true
}

// engineCommit is the commit a project's record keeps for f, or nil.
func engineCommit(f found) *engine.Commit {
	if f.commit == nil {
		return nil
	}
	c := *f.commit
	c.Link = f.Link
	return &c
}

// checkForward refuses a commit older than the one the project runs: a
// ref forced back to an old commit (by mistake, or by someone replaying
// one) must not undo newer configs unnoticed. Rolling back is a new
// commit, such as a git revert.
func (r *Refresher) checkForward(ctx context.Context, f found) error {
	if f.commit == nil {
		return nil
	}
	p, _, err := r.engine.Project(ctx, f.Project)
	if err != nil {
		return err
	}
	if run := p.Commit; run != nil && run.SHA != f.commit.SHA && run.Time.After(f.commit.Time) {
		return fmt.Errorf("%s: the ref went back to an older commit (%s, %s) than the one running (%s, %s), by a force-push? refused: roll back with a new commit, such as a git revert",
			f.Path, f.commit.SHA[:12], f.commit.Time.Format(time.RFC3339), run.SHA[:12], run.Time.Format(time.RFC3339))
	}
	return nil
}

// readCalendars reads the shared calendars again, if they come from a
// path: calendars that read replace the last good ones, and an error
// leaves those. It runs under the refresher's lock.
func (r *Refresher) readCalendars() error {
	path := r.opts.CalendarsPath
	if path == "" {
		return nil
	}
	cals, err := LoadCalendars(path)
	if err != nil {
		return fmt.Errorf("shared calendars %s: %w", path, err)
	}
	if cals.Digest() != r.calendars.Digest() {
		r.opts.Logger.Info("shared calendars changed; the projects that may name them are applied again", "path", path, "calendars", cals.Len())
	}
	r.calendars = cals
	return nil
}

// parse parses a project's file within the parse budget; it fails only
// for what the file holds, or for a stop while it waits.
func (r *Refresher) parse(ctx context.Context, f File, shared *SharedCalendars) (*Project, error) {
	weight := min(parseWeight(f.Data), r.opts.ParseBudget)
	if err := r.parsing.Acquire(ctx, weight); err != nil {
		return nil, err
	}
	defer r.parsing.Release(weight)
	return ParseWith(f.Path, f.Data, r.opts.Targets, Calendars{ICS: f.ICS, Shared: shared})
}

// parseWeight is what parsing data counts against the parse budget: its
// bytes, or, for a file denser in YAML items than a file of
// MaxFileSize with maxFileItems, its items at that density. The parser's
// cost follows the items: a few small files of one-character items would
// otherwise be parsed side by side, each at the cost of a big file.
func parseWeight(data []byte) int64 {
	items, _ := itemsBound(data, maxFileItems)
	return max(int64(len(data)), int64(items)*MaxFileSize/maxFileItems, 1)
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
		r.failed(ctx, project, "", nil, err)
		return
	}
	r.opts.Logger.Info("config removed; its jobs are disabled", "project", project)
}

// failed records why a project's newest revision is not running in its
// record, naming the commit it was read at, if any; the revision that is
// running, if any, stays as it was. A stop is no fault of the revision's
// and is only logged.
func (r *Refresher) failed(ctx context.Context, project, file string, commit *engine.Commit, err error) {
	msg := err.Error()
	var ec *engine.Commit
	if commit != nil {
		msg = fmt.Sprintf("%s (at commit %s: %q)", msg, commit.SHA[:12], commit.Subject)
		ec = &engine.Commit{SHA: commit.SHA, Time: commit.Time}
	}
	r.opts.Logger.Error("config not applied; the last good revision keeps running", "project", project, "err", msg)
	if ctx.Err() != nil {
		return
	}
	if rerr := r.engine.RecordConfigError(ctx, project, file, msg, r.opts.Now(), ec); rerr != nil {
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
			r.opts.Logger.Error("config refresh failed; what could not be read changed nothing", "err", err)
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
