package config

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// ProjectList is a service config (--projects-file) kept in a repo: each
// refresh reads it with its own GitSource (ls-remote first, so an unchanged
// list costs one small request) and yields a source for each project it
// lists. A revision of the list that is invalid, or that lists none of the
// projects running, is refused whole: the last good list keeps running, and
// the error names the file, line and commit.
type ProjectList struct {
	list *GitSource
	// each is the template of a listed project's source: its URL, ref and
	// path come from the entry.
	each GitOptions

	mu      sync.Mutex // one Sources at a time; guards what follows
	sources map[ProjectEntry]*GitSource
	good    []ProjectEntry // the last good list
	goodSHA string         // the commit good was read at
}

// NewProjectList returns the list that list's File holds; each gives what
// the projects' sources share (credentials, bounds, link), and the ref of
// an entry that names none. It reaches no remote.
func NewProjectList(list GitOptions, each GitOptions) (*ProjectList, error) {
	if list.File == "" {
		return nil, fmt.Errorf("projects list in %s: no file named", list.URL)
	}
	src, err := NewGitSource(list)
	if err != nil {
		return nil, err
	}
	return &ProjectList{list: src, each: each, sources: map[ProjectEntry]*GitSource{}}, nil
}

func (l *ProjectList) String() string {
	return "projects list " + l.list.opts.File + " in " + l.list.String()
}

// Sources reads the list and returns a source for each project it lists;
// a project's source is the same from one call to the next while its
// entry is unchanged, so it fetches only new commits. When the list cannot
// be read or is refused, Sources returns the last good list's sources
// with the error, and nil sources when there was none yet. running lists
// the projects that run a config now (the store's records): a new revision
// of the list that keeps none of them is refused.
func (l *ProjectList) Sources(ctx context.Context, running func(context.Context) ([]string, error)) ([]Source, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	entries, err := l.read(ctx, running)
	if err != nil {
		return l.refused(err)
	}
	out := make([]Source, 0, len(entries))
	used := map[ProjectEntry]*GitSource{}
	for _, e := range entries {
		src := l.sources[e]
		if src == nil {
			o := l.each
			o.URL, o.Path, o.Projects = e.Repo, strings.TrimSuffix(e.Path, "/"), []string{e.ID}
			if e.Ref != "" {
				o.Ref = e.Ref
			}
			var serr error
			if src, serr = NewGitSource(o); serr != nil {
				// ParseProjectsFile checked the URL; what is left (a ref or
				// path go-git refuses) refuses this revision of the list.
				return l.refused(fmt.Errorf("%s: project %s: %w", l, e.ID, serr))
			}
		}
		used[e] = src
		out = append(out, src)
	}
	l.good, l.sources = entries, used
	return out, nil
}

// refused is Sources' answer to a revision of the list that reads but
// cannot be used: the last good list's sources, or none.
func (l *ProjectList) refused(err error) ([]Source, error) {
	if l.good == nil {
		return nil, err
	}
	out := make([]Source, 0, len(l.good))
	for _, e := range l.good {
		out = append(out, l.sources[e])
	}
	return out, fmt.Errorf("%w; the last good list (%d projects) keeps running", err, len(l.good))
}

// read reads and checks the list at the ref's commit; running says which
// projects run a config now, as the store says, and is asked only of a
// commit not read before.
func (l *ProjectList) read(ctx context.Context, running func(context.Context) ([]string, error)) ([]ProjectEntry, error) {
	snap, err := l.list.Read(ctx)
	if err != nil {
		return nil, err
	}
	if l.good != nil && snap.Commit.SHA == l.goodSHA {
		return l.good, nil
	}
	at := fmt.Sprintf("at commit %s: %q", snap.Commit.SHA[:12], snap.Commit.Subject)
	entries, err := ParseProjectsFile(snap.Files[0].Path, snap.Files[0].Data)
	if err != nil {
		return nil, fmt.Errorf("%w (%s): refused", err, at)
	}
	// The safety valve of a repo of configs, for the list: a revision
	// keeping none of the projects that run (a wrong file, an emptied
	// list) must not disable them all. What runs is the store's answer,
	// not this process's last list, so that an instance just started
	// refuses it too.
	had, err := running(ctx)
	if err != nil {
		return nil, err
	}
	if len(had) > 0 && !slices.ContainsFunc(entries, func(e ProjectEntry) bool { return slices.Contains(had, e.ID) }) {
		slices.Sort(had)
		return nil, fmt.Errorf("%s (%s) lists none of the projects running (%s), and would disable them all: refused; remove projects in a revision that keeps at least one",
			snap.Files[0].Path, at, strings.Join(had, ", "))
	}
	l.goodSHA = snap.Commit.SHA
	return entries, nil
}
