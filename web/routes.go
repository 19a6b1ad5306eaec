package web

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/internal/version"
)

// route is one API route: what it answers, who may call it, and the query
// parameters it takes (any other is a bad request).
type route struct {
	method, path string
	mutates      bool
	// perm is what the caller needs in the project or job the path names.
	perm access.Permission
	// admin: only the server's administrators may call it (a route of
	// the server's own, which no project's grant reaches).
	admin  bool
	query  []string
	handle func(r *http.Request) (status int, body any, err error)
}

const (
	prefix     = "/api/v1"
	jobPath    = prefix + "/projects/{project}/jobs/{job}"
	invocation = jobPath + "/invocations/{invocation}"
)

// routes lists the API. Job ids hold a slash ("<project>/<job>"), so a job
// is addressed by its two parts, each one path segment.
func (s *server) routes() []route {
	paging := []string{"limit", "cursor"}
	listing := append([]string{"status", "since"}, paging...)
	return []route{
		{method: "GET", path: prefix + "/whoami", handle: s.whoami},
		// What runs, which /metrics' sundial_build_info says too: no
		// secret, so anyone who reaches the server may ask.
		{method: "GET", path: prefix + "/version", handle: func(*http.Request) (int, any, error) { return http.StatusOK, version.Get(), nil }},
		{method: "GET", path: prefix + "/projects", perm: access.Read, handle: s.listProjects},
		{method: "GET", path: prefix + "/instances", admin: true, handle: s.listInstances},
		{method: "GET", path: prefix + "/projects/{project}/jobs", perm: access.Read, query: paging, handle: s.listJobs},
		{method: "GET", path: jobPath, perm: access.Read, query: paging, handle: s.getJob},
		{method: "GET", path: jobPath + "/objectives", perm: access.Read, handle: s.getObjectives},
		{method: "GET", path: invocation, perm: access.Read, handle: s.getInvocation},
		{method: "GET", path: prefix + "/projects/{project}/invocations", perm: access.Read, query: listing, handle: s.listInvocations},
		{method: "GET", path: jobPath + "/invocations", perm: access.Read, query: listing, handle: s.listInvocations},
		{method: "POST", path: prefix + "/projects/{project}/pause", mutates: true, perm: access.Steer, handle: s.pauseProject},
		{method: "POST", path: prefix + "/projects/{project}/resume", mutates: true, perm: access.Steer, handle: s.resumeProject},
		{method: "POST", path: jobPath + "/trigger", mutates: true, perm: access.Trigger, handle: s.trigger},
		{method: "POST", path: jobPath + "/pause", mutates: true, perm: access.Steer, handle: s.pause},
		{method: "POST", path: jobPath + "/resume", mutates: true, perm: access.Steer, handle: s.resume},
		{method: "POST", path: jobPath + "/abort", mutates: true, perm: access.Steer, handle: s.abortJob},
		{method: "POST", path: jobPath + "/backfill", mutates: true, perm: access.Trigger, handle: s.backfill},
		{method: "POST", path: jobPath + "/cancel-backfill", mutates: true, perm: access.Trigger, handle: s.cancelBackfill},
		{method: "POST", path: invocation + "/abort", mutates: true, perm: access.Steer, handle: s.abortInvocation},
	}
}

// allowed maps each route path to the methods it takes.
func allowed(routes []route) map[string][]string {
	m := map[string][]string{}
	for _, r := range routes {
		m[r.path] = append(m[r.path], r.method)
		if r.method == "GET" {
			m[r.path] = append(m[r.path], "HEAD")
		}
	}
	return m
}

// guard checks the caller and the query before the route's handler runs, so
// a refused or malformed request reaches neither the engine nor the store
// (beyond the project's grants). Every refusal is logged with the caller's
// identity.
func (s *server) guard(rt route) http.Handler {
	return s.api(func(r *http.Request) (int, any, error) {
		if rt.mutates {
			// A page open in a browser must not steer jobs with the
			// rights of whoever is signed in, or of a local caller.
			if err := s.csrf.Check(r); err != nil {
				return 0, nil, s.refused(r, "", &apiError{status: http.StatusForbidden, msg: "cross-origin request refused: " + err.Error()})
			}
		}
		id, err := s.authenticate(r)
		if err != nil {
			return 0, nil, s.refused(r, "", err)
		}
		if err := s.authorize(r, rt, id); err != nil {
			return 0, nil, s.refused(r, id, err)
		}
		if err := checkQuery(r, rt.query); err != nil {
			return 0, nil, err
		}
		return rt.handle(r.WithContext(context.WithValue(r.Context(), identityKey{}, id)))
	})
}

// refused logs a request the gate refused, with who made it, and returns
// err.
func (s *server) refused(r *http.Request, id access.Identity, err error) error {
	if statusOf(err) < 500 {
		s.log.Warn("refused an API request", "identity", string(id), "method", r.Method, "path", r.URL.Path,
			"remote", r.RemoteAddr, "status", statusOf(err), "reason", err.Error())
	}
	return err
}

func (s *server) methodNotAllowed(methods []string) http.Handler {
	allow := strings.Join(slices.Sorted(slices.Values(methods)), ", ")
	return s.api(func(r *http.Request) (int, any, error) {
		return 0, nil, &apiError{
			status: http.StatusMethodNotAllowed,
			msg:    r.Method + " is not allowed here; allowed: " + allow,
			header: http.Header{"Allow": {allow}},
		}
	})
}
