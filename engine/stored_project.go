package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/store"
)

// Project is what the revision a project runs says about the project as a
// whole: who may see and steer it. Every instance reads it from the store
// (store.ProjectRecord), whichever one applied the revision.
type Project struct {
	ID string
	// Revision is the revision running; "" once the project's config is
	// gone (its jobs are disabled, and only administrators see it), or
	// while none of its revisions was valid.
	Revision  string
	AppliedAt time.Time // when Revision was applied: its loaded_at
	Grants    []access.RoleGrant
	File      string // the config file the project was last read from
	Jobs      int    // jobs Revision lists
	// Error is why the project's newest revision is not running, or was
	// applied only in part (it is tried again at the next refresh); ""
	// when the newest revision runs. ErrorAt is when it was found.
	Error   string
	ErrorAt time.Time
	// Commit is the commit Revision was read at; nil for a directory's.
	Commit *Commit
	// ErrorCommit is the commit whose revision Error refused; "" for a
	// directory's, or when the source itself failed.
	ErrorCommit string
	// Changes is what applying Revision did to the project's jobs; nil
	// for a record written before changes were kept.
	Changes *Changes
	// Content is the hash of the bytes Revision was read from; "" for a
	// record written before it was kept.
	Content string
}

// Changes is what one applied revision did to a project's jobs: the ids
// (the job names, in order) of the jobs it added, changed and removed,
// each list the first MaxChanges with its full count beside it, so a
// revision that touches thousands of jobs keeps the record small.
// A job the revision lists as disabled counts as removed.
type Changes struct {
	Added, Changed, Removed                []string
	AddedCount, ChangedCount, RemovedCount int
	// Before names, by the job names of Changed, the definition each had
	// before the revision (its store.DefinitionHash, for
	// store.Store.Definition), so that what the change did to their fire
	// times can be shown; a job whose definition was never stored apart
	// (written by an older release) has none.
	Before map[string]string
}

// MaxChanges bounds each list of Changes.
const MaxChanges = 50

// note adds a job to one list of the changes, keeping the count whole
// and the list bounded.
func note(list *[]string, count *int, name string) {
	if *count < MaxChanges {
		*list = append(*list, name)
	}
	*count++
}

// Commit is the git commit a revision was read at.
type Commit struct {
	SHA     string
	Author  string // "Name <email>"
	Time    time.Time
	Subject string // the message's first line
	Link    string // to the project's file at the commit; "" if the server has no --config-link
}

// HasConfig reports whether the record says anything of the project's
// config: a revision running or an error. A project whose config file is
// gone has neither.
func (p Project) HasConfig() bool { return p.Revision != "" || p.Error != "" }

// The project record's stored form. Its JSON names are a format every
// stored project is in: never rename or reuse one. A change an older
// release could not read correctly gets a new version, and decodeProject
// keeps reading every older one; testdata/project pins each version.
const projectVersion = 1

type storedProject struct {
	Version   int           `json:"v"`
	Revision  string        `json:"revision,omitempty"`
	AppliedAt time.Time     `json:"applied_at,omitzero"`
	Grants    []storedGrant `json:"grants,omitempty"`
	// The config status was added within version 1: left out while
	// empty, so a release before it reads the revision and grants and
	// drops the status (which the next refresh writes again).
	File    string    `json:"file,omitempty"`
	Jobs    int       `json:"jobs,omitempty"`
	Error   string    `json:"error,omitempty"`
	ErrorAt time.Time `json:"error_at,omitzero"`
	// The commits were added within version 1 too, and are dropped alike
	// by a release before them.
	Commit      *storedCommit `json:"commit,omitempty"`
	ErrorCommit string        `json:"error_commit,omitempty"`
	// The changes were added within version 1 too: a release before them
	// drops them, and the next revision it applies has none.
	Changes *storedChanges `json:"changes,omitempty"`
	// The content hash was added within version 1 too: a release before
	// it drops it, and a restart then attributes an unchanged file to the
	// newest commit once.
	Content string `json:"content,omitempty"`
}

type storedChanges struct {
	Added        []string `json:"added,omitempty"`
	AddedCount   int      `json:"added_count,omitempty"`
	Changed      []string `json:"changed,omitempty"`
	ChangedCount int      `json:"changed_count,omitempty"`
	Removed      []string `json:"removed,omitempty"`
	RemovedCount int      `json:"removed_count,omitempty"`
	// The definitions before, added within version 1 too: a release
	// before them drops them, and shows no fire times moved.
	Before map[string]string `json:"before,omitempty"`
}

type storedCommit struct {
	SHA     string    `json:"sha"`
	Author  string    `json:"author,omitempty"`
	Time    time.Time `json:"time,omitzero"`
	Subject string    `json:"subject,omitempty"`
	Link    string    `json:"link,omitempty"`
}

type storedGrant struct {
	Role    string   `json:"role"`
	Members []string `json:"members"`
	Jobs    []string `json:"jobs,omitempty"`
}

func encodeProject(p Project) ([]byte, error) {
	out := storedProject{Version: projectVersion, Revision: p.Revision, AppliedAt: p.AppliedAt,
		File: p.File, Jobs: p.Jobs, Error: p.Error, ErrorAt: p.ErrorAt, ErrorCommit: p.ErrorCommit, Content: p.Content}
	if c := p.Commit; c != nil {
		out.Commit = &storedCommit{SHA: c.SHA, Author: c.Author, Time: c.Time.Round(0).UTC(), Subject: c.Subject, Link: c.Link}
	}
	if c := p.Changes; c != nil {
		out.Changes = &storedChanges{Added: c.Added, AddedCount: c.AddedCount, Changed: c.Changed, ChangedCount: c.ChangedCount,
			Removed: c.Removed, RemovedCount: c.RemovedCount, Before: c.Before}
	}
	for _, g := range p.Grants {
		sg := storedGrant{Role: string(g.Role), Members: make([]string, 0, len(g.Members)), Jobs: g.Jobs}
		for _, m := range g.Members {
			sg.Members = append(sg.Members, string(m))
		}
		out.Grants = append(out.Grants, sg)
	}
	return json.Marshal(out)
}

// decodeProject reads any version of the stored project. A grant this
// release cannot read (a role or member it does not know) is an error,
// never a grant read wider than it was written.
func decodeProject(id string, b []byte) (Project, error) {
	var in storedProject
	if err := json.Unmarshal(b, &in); err != nil {
		return Project{}, fmt.Errorf("project %s: stored record: %w", id, err)
	}
	if in.Version != projectVersion {
		return Project{}, fmt.Errorf("project %s: stored record of version %d: this release reads version %d", id, in.Version, projectVersion)
	}
	p := Project{ID: id, Revision: in.Revision, AppliedAt: in.AppliedAt,
		File: in.File, Jobs: in.Jobs, Error: in.Error, ErrorAt: in.ErrorAt, ErrorCommit: in.ErrorCommit, Content: in.Content}
	if c := in.Commit; c != nil {
		p.Commit = &Commit{SHA: c.SHA, Author: c.Author, Time: c.Time, Subject: c.Subject, Link: c.Link}
	}
	if c := in.Changes; c != nil {
		p.Changes = &Changes{Added: c.Added, AddedCount: c.AddedCount, Changed: c.Changed, ChangedCount: c.ChangedCount,
			Removed: c.Removed, RemovedCount: c.RemovedCount, Before: c.Before}
	}
	for i, g := range in.Grants {
		role, err := access.ParseRole(g.Role)
		if err != nil {
			return Project{}, fmt.Errorf("project %s: stored grant %d: %w", id, i, err)
		}
		grant := access.RoleGrant{Role: role, Jobs: g.Jobs}
		for _, s := range g.Members {
			m, err := access.ParseMember(s)
			if err != nil {
				return Project{}, fmt.Errorf("project %s: stored grant %d: %w", id, i, err)
			}
			grant.Members = append(grant.Members, m)
		}
		p.Grants = append(p.Grants, grant)
	}
	return p, nil
}

// Project reads a project's record. A project with no record (none of its
// revisions applied yet, or one applied by a release before records) has
// no grants: ok is false.
func (e *Engine) Project(ctx context.Context, id string) (p Project, ok bool, err error) {
	if id == sourceRecord {
		return Project{ID: id}, false, nil
	}
	rec, err := e.store.Project(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return Project{ID: id}, false, nil
	}
	if err != nil {
		return Project{}, false, err
	}
	p, err = decodeProject(id, rec.Encoded)
	return p, err == nil, err
}

// Projects reads every project's record, by id.
func (e *Engine) Projects(ctx context.Context) (map[string]Project, error) {
	recs, err := e.store.Projects(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Project, len(recs))
	for _, r := range recs {
		if r.ID == sourceRecord {
			continue
		}
		p, err := decodeProject(r.ID, r.Encoded)
		if err != nil {
			return nil, err
		}
		out[r.ID] = p
	}
	return out, nil
}

// RecordConfigError records in the project's record why its newest
// revision is not running (err, found at at), and the file it came from
// if file is not "": the revision running, its grants and when it was
// applied stay as they were, so every instance reads the error beside the
// last good revision. A project with no record gets one with the error
// alone. commit is the commit of the refused revision, or "".
//
// The record is read and written in one store transaction, so an apply
// another instance recorded in between is never overwritten; and an
// error about the very commit running (which another instance applied
// meanwhile) is stale and not recorded. One about an older commit is
// recorded: a ref forced back to it is news.
func (e *Engine) RecordConfigError(ctx context.Context, project, file, err string, at time.Time, commit *Commit) error {
	if project == "" {
		return errors.New("a project needs an id")
	}
	uerr := e.store.UpdateProject(ctx, project, func(old *store.ProjectRecord) (*store.ProjectRecord, error) {
		p := Project{ID: project}
		if old != nil {
			var derr error
			if p, derr = decodeProject(project, old.Encoded); derr != nil {
				return nil, derr
			}
		}
		if commit != nil && p.Commit != nil && p.Commit.SHA == commit.SHA {
			return nil, nil
		}
		if file != "" {
			p.File = file
		}
		p.Error, p.ErrorAt, p.ErrorCommit = err, at.Round(0).UTC(), ""
		if commit != nil {
			p.ErrorCommit = commit.SHA
		}
		encoded, eerr := encodeProject(p)
		if eerr != nil {
			return nil, eerr
		}
		return &store.ProjectRecord{ID: project, Encoded: encoded}, nil
	})
	if uerr != nil {
		return fmt.Errorf("project %s: recording its config error: %w", project, uerr)
	}
	return nil
}
