package web

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// JobCounter is implemented by stores that can count jobs by project and
// state without reading them (store/sqlite does); with any other store the
// project listing pages through every job.
type JobCounter interface {
	CountJobs(ctx context.Context) (map[string]map[string]int, error)
}

type projectJSON struct {
	Project string `json:"project"`
	// Jobs counts the project's jobs by state; every state is present.
	Jobs   map[string]int `json:"jobs"`
	Total  int            `json:"total"`
	Config *configJSON    `json:"config,omitempty"`
}

type configJSON struct {
	Revision string     `json:"revision,omitempty"`
	LoadedAt *time.Time `json:"loaded_at,omitempty"`
	// Commit is the commit Revision was read at (a repo's revision).
	Commit *commitJSON `json:"commit,omitempty"`
	// Error is why the latest revision was refused; the project runs
	// Revision meanwhile. ErrorCommit is the refused commit.
	Error       string     `json:"error,omitempty"`
	ErrorAt     *time.Time `json:"error_at,omitempty"`
	ErrorCommit string     `json:"error_commit,omitempty"`
}

type commitJSON struct {
	SHA     string    `json:"sha"`
	Author  string    `json:"author,omitempty"`
	Time    time.Time `json:"time"`
	Subject string    `json:"subject,omitempty"`
	Link    string    `json:"link,omitempty"`
}

// listProjects lists every project the caller may see that has jobs in the
// store or a record (a project whose first config is invalid has no jobs,
// only a record with its error, and that error is what an operator needs
// to see). A caller who may read only some jobs of a project sees
// those jobs counted, and no others.
func (s *server) listProjects(r *http.Request) (int, any, error) {
	counts, err := s.countJobs(r.Context())
	if err != nil {
		return 0, nil, err
	}
	records, err := s.eng.Projects(r.Context())
	if err != nil {
		return 0, nil, err
	}
	for p := range records {
		if counts[p] == nil {
			counts[p] = map[string]int{}
		}
	}
	id := identityOf(r)
	out := make([]projectJSON, 0, len(counts))
	for _, p := range slices.Sorted(maps.Keys(counts)) {
		grants := records[p].Grants
		if !s.roles.Sees(id, grants) {
			continue
		}
		if jobs, all := s.roles.ReadableJobs(id, grants); !all {
			if counts[p], err = s.countSome(r.Context(), p, jobs); err != nil {
				return 0, nil, err
			}
		}
		pj := projectJSON{Project: p, Jobs: map[string]int{}, Config: configOf(records[p])}
		for _, st := range statemachine.States {
			pj.Jobs[string(st)] = counts[p][string(st)]
			pj.Total += counts[p][string(st)]
		}
		out = append(out, pj)
	}
	return http.StatusOK, map[string]any{"projects": out}, nil
}

func (s *server) countJobs(ctx context.Context) (map[string]map[string]int, error) {
	if c, ok := s.st.(JobCounter); ok {
		return c.CountJobs(ctx)
	}
	counts := map[string]map[string]int{}
	for p := (store.Page{Limit: maxLimit}); ; {
		jobs, next, err := s.st.Jobs(ctx, "", p)
		if err != nil {
			return nil, err
		}
		for _, j := range jobs {
			if counts[j.Project] == nil {
				counts[j.Project] = map[string]int{}
			}
			counts[j.Project][j.State]++
		}
		if next == "" {
			return counts, nil
		}
		p.Cursor = next
	}
}

// countSome counts the named jobs of a project by state.
func (s *server) countSome(ctx context.Context, project string, jobs []string) (map[string]int, error) {
	counts := map[string]int{}
	for _, name := range jobs {
		j, err := s.st.Job(ctx, jobid.Join(project, name))
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		counts[j.State]++
	}
	return counts, nil
}

// configOf is the config status a project's record holds; nil for a
// project with neither a revision running nor an error.
func configOf(p engine.Project) *configJSON {
	if !p.HasConfig() {
		return nil
	}
	c := &configJSON{Revision: p.Revision, LoadedAt: timePtr(p.AppliedAt), Error: p.Error, ErrorAt: timePtr(p.ErrorAt), ErrorCommit: p.ErrorCommit}
	if pc := p.Commit; pc != nil {
		c.Commit = &commitJSON{SHA: pc.SHA, Author: pc.Author, Time: pc.Time, Subject: pc.Subject, Link: pc.Link}
	}
	return c
}

// projectExists reports whether the store has a job of the project or a
// record of its config (a revision running, or the error of one refused).
func (s *server) projectExists(ctx context.Context, project string) (bool, error) {
	p, _, err := s.eng.Project(ctx, project)
	if err != nil || p.HasConfig() {
		return err == nil, err
	}
	jobs, _, err := s.st.Jobs(ctx, project, store.Page{Limit: 1})
	return len(jobs) > 0, err
}

// whoami answers who the server takes the caller for: the identity its
// credentials prove, "anonymous" without any. Anyone may ask.
func (s *server) whoami(r *http.Request) (int, any, error) {
	return http.StatusOK, map[string]string{"identity": string(identityOf(r))}, nil
}
