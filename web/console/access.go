package console

import (
	"context"
	"errors"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/store"
)

// project reads a project the viewer sees, with its grants. One it does
// not see is answered as one that does not exist, as the API answers it.
func (c *console) project(ctx context.Context, v viewer, project string) (engine.Project, []access.RoleGrant, error) {
	grants, err := c.Gate.Grants(ctx, project)
	if err != nil {
		return engine.Project{}, nil, err
	}
	if !c.Roles.Sees(v.ID, grants) {
		return engine.Project{}, nil, notFound("project %q not found", project)
	}
	p, _, err := c.Engine.Project(ctx, project)
	if err != nil {
		return engine.Project{}, nil, err
	}
	if !p.HasConfig() {
		jobs, _, err := c.Store.Jobs(ctx, project, store.Page{Limit: 1})
		if err != nil {
			return engine.Project{}, nil, err
		}
		if len(jobs) == 0 {
			return engine.Project{}, nil, notFound("project %q not found", project)
		}
	}
	return p, grants, nil
}

// jobView reads a job the viewer may read, with its project's grants; one
// it may not read is answered as one that does not exist.
func (c *console) jobView(ctx context.Context, v viewer, project, job string) (engine.View, []access.RoleGrant, error) {
	grants, err := c.Gate.Grants(ctx, project)
	if err != nil {
		return engine.View{}, nil, err
	}
	jobID := jobid.Join(project, job)
	if !c.Roles.May(v.ID, access.Read, grants, job) {
		return engine.View{}, nil, notFound("job %s not found", jobID)
	}
	view, err := c.Engine.View(ctx, jobID)
	if errors.Is(err, store.ErrNotFound) {
		return engine.View{}, nil, notFound("job %s not found", jobID)
	}
	return view, grants, err
}
