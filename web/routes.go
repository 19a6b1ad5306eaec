package web

import (
	"net/http"
	"slices"
	"strings"
)

// route is one API route: what it answers, who may call it, and the query
// parameters it takes (any other is a bad request).
type route struct {
	method, path string
	mutates      bool
	query        []string
	handle       func(r *http.Request) (status int, body any, err error)
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
	return []route{
		{method: "GET", path: prefix + "/projects", handle: s.listProjects},
		{method: "GET", path: prefix + "/projects/{project}/jobs", query: paging, handle: s.listJobs},
		{method: "GET", path: jobPath, query: paging, handle: s.getJob},
		{method: "GET", path: invocation, handle: s.getInvocation},
		{method: "POST", path: jobPath + "/trigger", mutates: true, handle: s.trigger},
		{method: "POST", path: jobPath + "/pause", mutates: true, handle: s.pause},
		{method: "POST", path: jobPath + "/resume", mutates: true, handle: s.resume},
		{method: "POST", path: jobPath + "/abort", mutates: true, handle: s.abortJob},
		{method: "POST", path: invocation + "/abort", mutates: true, handle: s.abortInvocation},
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
// a refused or malformed request reaches neither the engine nor the store.
func (s *server) guard(rt route) http.Handler {
	return s.api(func(r *http.Request) (int, any, error) {
		if err := s.auth.check(r, rt.mutates); err != nil {
			return 0, nil, err
		}
		if err := checkQuery(r, rt.query); err != nil {
			return 0, nil, err
		}
		return rt.handle(r)
	})
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
