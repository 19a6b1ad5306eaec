package config

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// The reasons a job is DISABLED by its config. A job DISABLED for another
// reason (auto-disabled after failing in a row) stays so while its
// definition in config is unchanged; an edit to the job enables it again.
const (
	ReasonRemoved  = "removed from config"
	ReasonDisabled = "disabled in config"
)

// Importer makes the engine's jobs match project configs.
type Importer struct {
	Engine *engine.Engine
	Store  store.Store
}

// Apply makes the engine run one valid revision of a project: new and
// changed jobs are defined (a running invocation finishes under its old
// definition), and jobs that left the config or are `disabled: true` are
// DISABLED with their history kept. A job `disabled: true` that never ran
// is not created. Jobs whose definition did not change are not touched.
// The error lists every job that could not be brought in line; the others
// are applied all the same.
func (im *Importer) Apply(ctx context.Context, p *Project) error {
	if p.ID == "" {
		// The store lists every job for the empty project.
		return errors.New("a project needs an id")
	}
	existing, err := im.jobs(ctx, p.ID)
	if err != nil {
		return err
	}
	var errs []error
	for _, j := range p.Jobs {
		cur := existing[j.ID]
		delete(existing, j.ID)
		if err := im.apply(ctx, j, cur); err != nil {
			errs = append(errs, fmt.Errorf("job %s: %w", j.ID, err))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(existing)) {
		if err := im.disable(ctx, existing[id], ReasonRemoved); err != nil {
			errs = append(errs, fmt.Errorf("job %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// Remove disables every job of a project whose config file is gone.
func (im *Importer) Remove(ctx context.Context, project string) error {
	return im.Apply(ctx, &Project{ID: project})
}

func (im *Importer) apply(ctx context.Context, j Job, cur *store.Job) error {
	if j.Disabled {
		if cur == nil {
			return nil
		}
		return im.disable(ctx, cur, ReasonDisabled)
	}
	if cur != nil && !redefines(cur, j.Definition) {
		return nil
	}
	return im.Engine.Define(ctx, j.ID, j.Definition)
}

// redefines reports whether Define must be called: the definition changed,
// or the job is DISABLED by its config and is back in it. Define itself
// is a no-op for an equal definition, but it would also enable a job that
// was auto-disabled, at every restart of the server.
func redefines(cur *store.Job, def engine.Definition) bool {
	encoded, err := json.Marshal(def)
	if err != nil || string(encoded) != string(cur.Definition) {
		return true
	}
	if cur.State != string(statemachine.Disabled) {
		return false
	}
	m, err := engine.State(cur)
	return err != nil || m.Reason == ReasonRemoved || m.Reason == ReasonDisabled
}

func (im *Importer) disable(ctx context.Context, cur *store.Job, reason string) error {
	if cur.State == string(statemachine.Disabled) {
		return nil
	}
	return im.Engine.Disable(ctx, cur.ID, reason)
}

// jobs lists a project's jobs in the store by id.
func (im *Importer) jobs(ctx context.Context, project string) (map[string]*store.Job, error) {
	out := map[string]*store.Job{}
	for p := (store.Page{Limit: 500}); ; {
		jobs, next, err := im.Store.Jobs(ctx, project, p)
		if err != nil {
			return nil, fmt.Errorf("project %s: listing its jobs: %w", project, err)
		}
		for _, j := range jobs {
			out[j.ID] = j
		}
		if next == "" {
			return out, nil
		}
		p.Cursor = next
	}
}
