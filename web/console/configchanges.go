package console

import (
	"net/http"
	"slices"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/forecast"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// configChangesPage is what a project's last import does to its jobs'
// schedules, from now: sundial diff's view of the revision before and the
// one running.
type configChangesPage struct {
	Project engine.Project
	Diff    *forecast.Diff
	Jobs    []configJobChange
	// Partial: the import changed more jobs than its record lists, or
	// some changed job's definition before is not kept; those are
	// counted as they are now.
	Partial bool
	// Limited: the viewer reads some of the project's jobs, and sees
	// the changes and the launches of those alone.
	Limited bool
}

// configJobChange is a job's line of the page: its change, its fields,
// and the fire times it loses and gains in the week.
type configJobChange struct {
	forecast.JobDiff
	Name, URL  string
	Gone, Come []string
}

// configChanges shows what the project's last import did to its jobs'
// fire times (per job, those in the next week that move) and to its
// launches per second over the next day, warning of each second it takes
// past forecast.DefaultHerd launches with the H that would spread it: what
// sundial diff says of a change before it lands, for the change that
// landed. The jobs before are the ones running now, with each changed
// one's definition before the import and the removed ones back.
func (c *console) configChanges(w http.ResponseWriter, r *http.Request, v viewer) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	ctx, id := r.Context(), r.PathValue("project")
	p, grants, err := c.project(ctx, v, id)
	if err != nil {
		return err
	}
	ch := p.Changes
	if ch == nil {
		ch = &engine.Changes{}
	}
	_, all := c.Roles.ReadableJobs(v.ID, grants)
	page := configChangesPage{Project: p, Limited: !all,
		Partial: ch.AddedCount > len(ch.Added) || ch.ChangedCount > len(ch.Changed) || ch.RemovedCount > len(ch.Removed)}
	var before, after []engine.Job
	err = c.projectJobs(ctx, v, id, grants, func(j *store.JobRecord) error {
		view, err := engine.Decode(j)
		if err != nil {
			return nil // unreadable: its page says why
		}
		name := jobName(j.ID)
		now := engine.Job{ID: j.ID, Definition: view.Definition}
		listed := !(view.State.State == statemachine.Disabled && view.State.Reason.FromConfig())
		switch {
		case slices.Contains(ch.Removed, name):
			before = append(before, now)
		case !listed:
		case slices.Contains(ch.Added, name):
			after = append(after, now)
		case slices.Contains(ch.Changed, name):
			was, ok := c.definitionBefore(r, j.ID, ch.Before[name])
			if !ok {
				page.Partial = true
				was = now
			}
			before, after = append(before, was), append(after, now)
		default:
			before, after = append(before, now), append(after, now)
		}
		return nil
	})
	if err != nil {
		return err
	}
	page.Diff = forecast.Compare(before, after, forecast.Options{Start: c.Now().UTC().Truncate(time.Second)})
	for _, j := range page.Diff.Jobs {
		line := configJobChange{JobDiff: j, Name: jobName(j.ID), URL: jobURL(j.ID)}
		for _, t := range j.Gone {
			line.Gone = append(line.Gone, shortUTC(t))
		}
		for _, t := range j.Come {
			line.Come = append(line.Come, shortUTC(t))
		}
		page.Jobs = append(page.Jobs, line)
	}
	crumbs := []crumb{{Name: "Configs", URL: "/configs"}, {Name: id}}
	c.renderTitled(w, r, v, http.StatusOK, "configchanges", "Last import of "+id, crumbs, page)
	return nil
}

// definitionBefore reads the definition a job had before the last import
// changed it, and false when it is not kept.
func (c *console) definitionBefore(r *http.Request, jobID, hash string) (engine.Job, bool) {
	if hash == "" {
		return engine.Job{}, false
	}
	b, err := c.Store.Definition(r.Context(), jobID, hash)
	if err != nil {
		return engine.Job{}, false
	}
	def, err := engine.DecodeDefinition(b)
	if err != nil {
		return engine.Job{}, false
	}
	return engine.Job{ID: jobID, Definition: def}, true
}

// shortUTC writes a fire time short, in UTC, as the page's column says:
// "Mar 8 02:00", to the second when it is not on a minute (a jitter's).
func shortUTC(t time.Time) string {
	if t.Second() != 0 || t.Nanosecond() != 0 {
		return t.UTC().Format("Jan 2 15:04:05")
	}
	return t.UTC().Format("Jan 2 15:04")
}
