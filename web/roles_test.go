package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
)

// rolesFixture applies two projects through ApplyProject, as the config
// refresher does, and runs them to 10:02:30:
//
//	billing/nightly  every minute, noop
//	billing/worker   every minute, async: 10:01 RUNNING
//	ops/heartbeat    every minute, noop; ops grants nothing
//
// billing's grants: alice reads, ci triggers, dana owns, group sre
// (carol) triggers, bob owns only the worker job.
func rolesFixture(t *testing.T, singleUser bool) *harness {
	h := newHarness(t)
	h.handler = newHandler(h, h.st, "", singleUser)
	m := func(s string) []access.Member { return []access.Member{access.Member(s)} }
	billing := engine.Revision{ID: "r1", Jobs: []engine.Job{
		{ID: "billing/nightly", Definition: engine.Definition{Schedule: "* * * * *", Target: "noop", Policy: statemachine.Policy{Timeout: time.Minute}}},
		{ID: "billing/worker", Definition: engine.Definition{Schedule: "* * * * *", Target: "async"}},
	}, Grants: []access.RoleGrant{
		{Role: access.Reader, Members: m("user:alice@example.com")},
		{Role: access.Triggerer, Members: m("serviceAccount:ci@proj.iam.gserviceaccount.com")},
		{Role: access.Owner, Members: m("user:dana@example.com")},
		{Role: access.Triggerer, Members: m("group:sre")},
		{Role: access.Owner, Members: m("user:bob@example.com"), Jobs: []string{"worker"}},
	}}
	if err := h.eng.ApplyProject(h.ctx, "billing", billing); err != nil {
		t.Fatal(err)
	}
	ops := engine.Revision{ID: "r1", Jobs: []engine.Job{{ID: "ops/heartbeat", Definition: engine.Definition{Schedule: "* * * * *", Target: "noop"}}}}
	if err := h.eng.ApplyProject(h.ctx, "ops", ops); err != nil {
		t.Fatal(err)
	}
	h.runUntil(t0.Add(2*time.Minute + 30*time.Second))
	return h
}

// TestEveryRouteForEveryRole: what each role may do on every route, and
// that every refused request changes nothing.
func TestEveryRouteForEveryRole(t *testing.T) {
	const inv = "/api/v1/projects/billing/jobs/worker/invocations/20260302T100100Z"
	routes := []struct{ name, method, path, body string }{
		{"list projects", "GET", "/api/v1/projects", ""},
		{"list jobs", "GET", "/api/v1/projects/billing/jobs", ""},
		{"get job", "GET", "/api/v1/projects/billing/jobs/nightly", ""},
		{"get invocation", "GET", inv, ""},
		{"trigger", "POST", "/api/v1/projects/billing/jobs/nightly/trigger", ""},
		{"pause", "POST", "/api/v1/projects/billing/jobs/nightly/pause", `{"reason": "maintenance"}`},
		{"resume", "POST", "/api/v1/projects/billing/jobs/nightly/resume", ""},
		{"abort invocation", "POST", inv + "/abort", ""},
		{"abort job", "POST", "/api/v1/projects/billing/jobs/worker/abort", ""},
		{"read an ungranted project", "GET", "/api/v1/projects/ops/jobs", ""},
		{"read a job of an ungranted project", "GET", "/api/v1/projects/ops/jobs/heartbeat", ""},
		{"steer a job of an ungranted project", "POST", "/api/v1/projects/ops/jobs/heartbeat/pause", `{"reason": "x"}`},
		{"read a project that does not exist", "GET", "/api/v1/projects/nosuch/jobs", ""},
		{"pause a project's jobs", "POST", "/api/v1/projects/billing/pause", `{"reason": "incident 42"}`},
		{"resume a project's jobs", "POST", "/api/v1/projects/billing/resume", `{"paused_for": "incident 42"}`},
		{"pause the jobs of an ungranted project", "POST", "/api/v1/projects/ops/pause", `{"reason": "x"}`},
		{"pause the jobs of a project that does not exist", "POST", "/api/v1/projects/nosuch/pause", `{"reason": "x"}`},
		{"backfill", "POST", "/api/v1/projects/billing/jobs/nightly/backfill", `{"from": "2026-03-02T09:50:00Z", "to": "2026-03-02T10:00:00Z"}`},
		{"cancel a backfill", "POST", "/api/v1/projects/billing/jobs/nightly/cancel-backfill", ""},
		{"list a project's invocations", "GET", "/api/v1/projects/billing/invocations?status=failed&since=24h", ""},
		{"list a job's invocations", "GET", "/api/v1/projects/billing/jobs/nightly/invocations", ""},
		{"list the invocations of an ungranted project", "GET", "/api/v1/projects/ops/invocations", ""},
	}
	// Statuses in the order of routes.
	var (
		anonymous = []int{200, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401}
		stranger  = []int{200, 404, 404, 404, 404, 404, 404, 404, 404, 404, 404, 404, 404, 404, 404, 404, 404, 404, 404, 404, 404, 404}
		reader    = []int{200, 200, 200, 200, 403, 403, 403, 403, 403, 404, 404, 404, 404, 403, 403, 404, 404, 403, 403, 200, 200, 404}
		triggerer = []int{200, 200, 200, 200, 202, 403, 403, 403, 403, 404, 404, 404, 404, 403, 403, 404, 404, 202, 200, 200, 200, 404}
		owner     = []int{200, 200, 200, 200, 202, 200, 200, 200, 200, 404, 404, 404, 404, 200, 200, 404, 404, 202, 200, 200, 200, 404}
		oneJob    = []int{200, 200, 404, 200, 404, 404, 404, 200, 200, 404, 404, 404, 404, 403, 403, 404, 404, 404, 404, 200, 404, 404}
		admin     = []int{200, 200, 200, 200, 202, 200, 200, 200, 200, 200, 200, 200, 404, 200, 200, 200, 404, 202, 200, 200, 200, 200}
	)
	roles := []struct {
		name       string
		singleUser bool
		identity   string // X-Test-Identity; "" for none
		remote     bool
		want       []int
		projects   string // what GET /projects lists
	}{
		{"anonymous", false, "", true, anonymous, ""},
		{"a user with no grant", false, "user:mallory@example.com", true, stranger, ""},
		{"a reader", false, "user:alice@example.com", true, reader, "billing"},
		{"a triggerer", false, "serviceAccount:ci@proj.iam.gserviceaccount.com", true, triggerer, "billing"},
		{"an owner", false, "user:dana@example.com", true, owner, "billing"},
		{"an owner of one job", false, "user:bob@example.com", true, oneJob, "billing"},
		{"a member of a group that triggers", false, "user:carol@example.com", true, triggerer, "billing"},
		{"an administrator", false, "user:root@example.com", true, admin, "billing,ops"},
		{"an administrator through a group", false, "user:oncall@example.com", true, admin, "billing,ops"},
		{"local in the single-user mode", true, "", false, admin, "billing,ops"},
		{"local once sign-in is configured", false, "", false, anonymous, ""},
		{"a remote caller in the single-user mode", true, "", true, anonymous, ""},
	}
	for _, role := range roles {
		t.Run(role.name, func(t *testing.T) {
			t.Parallel()
			h := rolesFixture(t, role.singleUser)
			for i, rt := range routes {
				r := req{method: rt.method, path: rt.path, body: rt.body, remote: role.remote, header: http.Header{}}
				if role.identity != "" {
					r.header.Set("X-Test-Identity", role.identity)
				}
				before := h.snapshot()
				a := h.do(r)
				if a.status != role.want[i] {
					t.Errorf("%s %s: status %d, want %d\n%s", rt.method, rt.path, a.status, role.want[i], a.raw)
				}
				if a.status >= 400 {
					h.unchanged(before, fmt.Sprintf("a refused %s %s", rt.method, rt.path))
					if a.body["error"] == nil {
						t.Errorf("%s %s: a refusal without a JSON error: %s", rt.method, rt.path, a.raw)
					}
				}
				if a.status == 401 && a.header.Get("Www-Authenticate") == "" {
					t.Errorf("%s %s: 401 without WWW-Authenticate", rt.method, rt.path)
				}
				if i == 0 {
					var listed []string
					for _, p := range get(a.body, "projects").([]any) {
						listed = append(listed, get(p, "project").(string))
					}
					if got := strings.Join(listed, ","); got != role.projects {
						t.Errorf("GET /api/v1/projects lists %q, want %q", got, role.projects)
					}
				}
			}
		})
	}
}

// TestAProjectTheCallerMayNotReadIsAnsweredAsOneThatDoesNotExist: the
// same status and the same words, so a caller cannot tell them apart.
func TestAProjectTheCallerMayNotReadIsAnsweredAsOneThatDoesNotExist(t *testing.T) {
	h := rolesFixture(t, false)
	as := func(path string) answer {
		return h.do(req{method: "GET", path: path, remote: true, header: http.Header{"X-Test-Identity": {"user:alice@example.com"}}})
	}
	for _, tc := range []struct{ hidden, missing, project string }{
		{"/api/v1/projects/ops/jobs", "/api/v1/projects/opz/jobs", "op"},
		{"/api/v1/projects/ops/jobs/heartbeat", "/api/v1/projects/opz/jobs/heartbeat", "op"},
	} {
		a, b := as(tc.hidden), as(tc.missing)
		if a.status != 404 || b.status != 404 || strings.Replace(a.raw, "ops", "opz", 1) != b.raw {
			t.Errorf("%s answers %d %s; %s answers %d %s; want the same 404", tc.hidden, a.status, a.raw, tc.missing, b.status, b.raw)
		}
	}
	// A job the caller's grants do not name, likewise.
	bob := http.Header{"X-Test-Identity": {"user:bob@example.com"}}
	a := h.do(req{method: "GET", path: "/api/v1/projects/billing/jobs/nightly", remote: true, header: bob})
	b := h.do(req{method: "GET", path: "/api/v1/projects/billing/jobs/nosuch", remote: true, header: bob})
	if a.status != 404 || strings.Replace(a.raw, "nightly", "nosuch", 1) != b.raw {
		t.Errorf("a job outside the grant answers %d %s; a missing one %s", a.status, a.raw, b.raw)
	}
	body := h.do(req{method: "GET", path: "/api/v1/projects/billing/jobs", remote: true, header: bob}).body
	if jobs := get(body, "jobs").([]any); len(jobs) != 1 || get(jobs[0], "job") != "worker" {
		t.Errorf("an owner of worker lists %v; want worker alone", jobs)
	}
}

func TestForgedCredentialsAreRefusedNotServedAsAnonymous(t *testing.T) {
	h := rolesFixture(t, false)
	a := h.do(req{method: "GET", path: "/api/v1/projects", remote: true, header: http.Header{"X-Test-Identity": {"forged"}}})
	if a.status != 401 || !strings.Contains(a.header.Get("Www-Authenticate"), "invalid_token") {
		t.Errorf("forged credentials: %d %v %s; want 401 invalid_token", a.status, a.header, a.raw)
	}
}

// TestChangesShowWhoMadeThem: the job's audit entries and a manual
// invocation name the identity that asked.
func TestChangesShowWhoMadeThem(t *testing.T) {
	h := rolesFixture(t, false)
	dana := http.Header{"X-Test-Identity": {"user:dana@example.com"}}
	ci := http.Header{"X-Test-Identity": {"serviceAccount:ci@proj.iam.gserviceaccount.com"}}
	if a := h.do(req{method: "POST", path: "/api/v1/projects/billing/jobs/nightly/trigger", remote: true, header: ci}); a.status != 202 {
		t.Fatalf("trigger: %d %s", a.status, a.raw)
	}
	if a := h.do(req{method: "POST", path: "/api/v1/projects/billing/jobs/nightly/pause", body: `{"reason": "  "}`, remote: true, header: dana}); a.status != 400 {
		t.Errorf("a pause without a reason: %d %s; want 400", a.status, a.raw)
	}
	if a := h.do(req{method: "POST", path: "/api/v1/projects/billing/jobs/nightly/pause", body: `{"reason": "db migration"}`, remote: true, header: dana}); a.status != 200 {
		t.Fatalf("pause: %d %s", a.status, a.raw)
	}
	body := h.do(req{method: "GET", path: "/api/v1/projects/billing/jobs/nightly", remote: true, header: dana}).body
	audit, _ := get(body, "audit").([]any)
	if len(audit) != 2 || get(audit[0], "by") != "user:dana@example.com" || get(audit[0], "action") != "pause" || get(audit[0], "reason") != "db migration" ||
		get(audit[1], "by") != "serviceAccount:ci@proj.iam.gserviceaccount.com" || get(audit[1], "action") != "trigger" || get(audit[1], "invocation") != "manual-1" ||
		get(audit[0], "at") != "2026-03-02T10:02:30Z" {
		t.Errorf("audit %v", audit)
	}
	inv := h.do(req{method: "GET", path: "/api/v1/projects/billing/jobs/nightly/invocations/manual-1", remote: true, header: dana}).body
	if get(inv, "triggered_by") != "serviceAccount:ci@proj.iam.gserviceaccount.com" {
		t.Errorf("the manual invocation %v; want triggered_by the CI account", inv)
	}
}
