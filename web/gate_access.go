package web

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/jobid"
)

// DefaultGrantsTTL is how long an instance answers from the project
// grants it read: a grant revoked by a new revision takes effect on every
// instance within this long after the revision is applied.
const DefaultGrantsTTL = 10 * time.Second

// identityKey is the request context's key of the caller's identity.
type identityKey struct{}

// identityOf is the caller of a request that passed the gate.
func identityOf(r *http.Request) access.Identity {
	id, _ := r.Context().Value(identityKey{}).(access.Identity)
	return id
}

// grantsCache holds each project's grants as its record said when read,
// for at most ttl: every API request asks for them, and the record lives
// in the store shared by every instance.
type grantsCache struct {
	eng *engine.Engine
	now func() time.Time // nil: no caching
	ttl time.Duration

	mu sync.Mutex
	m  map[string]cachedGrants
}

type cachedGrants struct {
	grants []access.RoleGrant
	until  time.Time
}

func (c *grantsCache) get(ctx context.Context, project string) ([]access.RoleGrant, error) {
	var now time.Time
	if c.now != nil {
		now = c.now()
		c.mu.Lock()
		e, ok := c.m[project]
		c.mu.Unlock()
		if ok && now.Before(e.until) {
			return e.grants, nil
		}
	}
	p, _, err := c.eng.Project(ctx, project)
	if err != nil {
		return nil, err
	}
	if c.now != nil {
		c.mu.Lock()
		if c.m == nil {
			c.m = map[string]cachedGrants{}
		}
		c.m[project] = cachedGrants{grants: p.Grants, until: now.Add(c.ttl)}
		c.mu.Unlock()
	}
	return p.Grants, nil
}

// authorize decides whether the caller may make the route's request. A
// project it may not see, or a job of it it may not read, is answered as
// one that does not exist; a readable thing it may not change is 403. An
// anonymous caller refused anything is told to bring credentials (401),
// whether the thing exists or not.
func (s *server) authorize(r *http.Request, rt route, id access.Identity) error {
	project, job := r.PathValue("project"), r.PathValue("job")
	if rt.admin {
		if s.roles.Administrator(id) {
			return nil
		}
		if id == access.Anonymous {
			return unauthenticated()
		}
		return &apiError{status: http.StatusForbidden, msg: string(id) + " is not an administrator of this server"}
	}
	if project == "" {
		return nil // the project listing: filtered by what the caller sees
	}
	grants, err := s.grants.get(r.Context(), project)
	if err != nil {
		return err
	}
	var hidden error
	switch {
	case job == "" && !s.roles.Sees(id, grants):
		hidden = notFound("project %q not found", project)
	case job != "" && !s.roles.May(id, access.Read, grants, job):
		hidden = notFound("job %s not found", jobid.Join(project, job))
	case job == "" && rt.perm == access.Read:
		// The job listing: the caller sees the project, and the listing
		// holds only the jobs it may read.
	case job == "" && !s.roles.May(id, rt.perm, grants, ""):
		hidden = &apiError{status: http.StatusForbidden, msg: string(id) + " may not " + string(rt.perm) + " every job of project " + project}
	case !s.roles.May(id, rt.perm, grants, job):
		hidden = &apiError{status: http.StatusForbidden, msg: string(id) + " may not " + string(rt.perm) + " job " + jobid.Join(project, job)}
	}
	if hidden == nil {
		return nil
	}
	if id == access.Anonymous {
		return unauthenticated()
	}
	return hidden
}

func unauthenticated() error {
	return &apiError{status: http.StatusUnauthorized, msg: "sign in: anonymous callers may not see this",
		header: http.Header{"Www-Authenticate": {`Bearer realm="sundial"`}}}
}
