package web_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
)

// Every bad request answers a JSON error with its status, and changes
// nothing: the jobs, the tasks and every invocation are as they were.
func TestBadRequestsChangeNothing(t *testing.T) {
	h := fixture(t)
	// A job's page cursor, to be given where it does not belong.
	jobsCursor := get(h.ok("GET", "/api/v1/projects/billing/jobs?limit=1", "", http.StatusOK), "next_cursor").(string)
	invCursor := get(h.ok("GET", "/api/v1/projects/billing/jobs/worker?limit=1", "", http.StatusOK), "next_cursor").(string)
	// Wrapped for the right listing, but not a cursor the store made.
	forged := base64.RawURLEncoding.EncodeToString([]byte("jobs/billing\x00not-a-store-cursor"))

	const job = "/api/v1/projects/billing/jobs/nightly"
	cases := []struct {
		name   string
		req    req
		status int
		err    string // a part of the error message
	}{
		{"an unknown project is not found", req{method: "GET", path: "/api/v1/projects/nope/jobs"}, 404, `project "nope" not found`},
		{"an unknown job is not found", req{method: "GET", path: "/api/v1/projects/billing/jobs/nope"}, 404, "job billing/nope not found"},
		{"a job of another project is not found", req{method: "GET", path: "/api/v1/projects/ops/jobs/nightly"}, 404, "job ops/nightly not found"},
		{"an unknown invocation is not found", req{method: "GET", path: job + "/invocations/nope"}, 404, `invocation "nope" of job billing/nightly not found`},
		{"an invocation of an unknown job is not found", req{method: "GET", path: "/api/v1/projects/billing/jobs/nope/invocations/20260302T100100Z"}, 404, "job billing/nope not found"},
		{"an unknown route is not found", req{method: "GET", path: "/api/v1/jobs"}, 404, "no such API route"},

		{"a path with .. is not found, not redirected", req{method: "POST", path: "/api/v1/projects/ops/../billing/jobs/nightly/trigger"}, 404, "not canonical"},
		{"a path with an encoded .. is not found", req{method: "GET", path: "/api/v1/projects/%2e%2e/projects/billing/jobs"}, 404, "not canonical"},
		{"a path with // is not found", req{method: "GET", path: "/api/v1/projects//billing/jobs"}, 404, "not canonical"},
		{"a path starting with // is not found", req{method: "GET", path: "//api/v1/projects"}, 404, "not canonical"},
		{"a path with /./ is not found", req{method: "GET", path: "/api/v1/./projects"}, 404, "not canonical"},
		{"the API's root is not found, not redirected", req{method: "GET", path: "/api/v1"}, 404, "no such API route"},
		{"a path outside the API is a JSON 404", req{method: "GET", path: "/console"}, 404, "no such path: /console"},
		{"the root is a JSON 404", req{method: "GET", path: "/"}, 404, "no such path: /"},
		{"a change posted to /healthz is not allowed", req{method: "POST", path: "/healthz"}, 405, "allowed: GET, HEAD"},
		{"a change posted to /readyz is not allowed", req{method: "POST", path: "/readyz"}, 405, "allowed: GET, HEAD"},

		{"triggering an unknown job is not found", req{method: "POST", path: "/api/v1/projects/billing/jobs/nope/trigger"}, 404, "job billing/nope not found"},
		{"pausing an unknown job is not found", req{method: "POST", path: "/api/v1/projects/billing/jobs/nope/pause", body: `{"reason": "x"}`}, 404, "job billing/nope not found"},
		{"resuming an unknown job is not found", req{method: "POST", path: "/api/v1/projects/billing/jobs/nope/resume"}, 404, "job billing/nope not found"},
		{"aborting an unknown job is not found", req{method: "POST", path: "/api/v1/projects/billing/jobs/nope/abort"}, 404, "job billing/nope not found"},
		{"aborting an unknown invocation is not found", req{method: "POST", path: job + "/invocations/nope/abort"}, 404, `invocation "nope" of job billing/nightly not found`},
		{"aborting an invocation of an unknown job is not found", req{method: "POST", path: "/api/v1/projects/billing/jobs/nope/invocations/x/abort"}, 404, "job billing/nope not found"},

		{"aborting an ended invocation is a conflict", req{method: "POST", path: job + "/invocations/20260302T100100Z/abort"}, 409, "has ended"},
		{"aborting a skipped record is a conflict", req{method: "POST", path: "/api/v1/projects/billing/jobs/worker/invocations/20260302T100200Z/abort"}, 409, "has ended"},
		{"pausing a disabled job is a conflict", req{method: "POST", path: "/api/v1/projects/ops/jobs/heartbeat/pause", body: `{"reason": "x"}`}, 409, "disabled"},
		{"triggering a disabled job is a conflict", req{method: "POST", path: "/api/v1/projects/ops/jobs/heartbeat/trigger"}, 409, "disabled"},

		{"a limit of 0 is refused", req{method: "GET", path: "/api/v1/projects/billing/jobs?limit=0"}, 400, `limit "0"`},
		{"a limit over 1000 is refused", req{method: "GET", path: job + "?limit=1001"}, 400, `limit "1001"`},
		{"a limit that is not a number is refused", req{method: "GET", path: job + "?limit=ten"}, 400, `limit "ten"`},
		{"an empty limit is refused", req{method: "GET", path: job + "?limit="}, 400, `limit ""`},
		{"a garbled cursor is refused", req{method: "GET", path: "/api/v1/projects/billing/jobs?cursor=%25%25"}, 400, "not a cursor of this listing"},
		{"a jobs cursor of another project is refused", req{method: "GET", path: "/api/v1/projects/ops/jobs?cursor=" + jobsCursor}, 400, "not a cursor of this listing"},
		{"an invocations cursor of another job is refused", req{method: "GET", path: job + "?cursor=" + invCursor}, 400, "not a cursor of this listing"},
		{"a jobs cursor given for invocations is refused", req{method: "GET", path: job + "?cursor=" + jobsCursor}, 400, "not a cursor of this listing"},
		{"a cursor the store did not make is refused", req{method: "GET", path: "/api/v1/projects/billing/jobs?cursor=" + forged}, 400, "invalid page cursor"},
		{"an unknown query parameter is refused", req{method: "GET", path: "/api/v1/projects/billing/jobs?state=RUNNING"}, 400, `unknown query parameter "state"`},
		{"a query parameter on a route that takes none is refused", req{method: "GET", path: job + "/invocations/20260302T100100Z?log=0"}, 400, "takes none"},
		{"a query parameter on a change is refused", req{method: "POST", path: job + "/trigger?force=1"}, 400, `unknown query parameter "force"`},
		{"a query parameter given twice is refused", req{method: "GET", path: job + "?limit=1&limit=2"}, 400, "given 2 times"},
		{"a malformed query is refused", req{method: "GET", path: job + "?limit=%zz"}, 400, "malformed query"},

		{"deleting a job is not allowed", req{method: "DELETE", path: job}, 405, "DELETE is not allowed here; allowed: GET, HEAD"},
		{"a trigger by GET is not allowed", req{method: "GET", path: job + "/trigger"}, 405, "allowed: POST"},
		{"posting to the project list is not allowed", req{method: "POST", path: "/api/v1/projects"}, 405, "allowed: GET, HEAD"},

		{"a pause without a reason is refused", req{method: "POST", path: job + "/pause"}, 400, "pause needs a reason"},
		{"a pause with a blank reason is refused", req{method: "POST", path: job + "/pause", body: `{"reason": "   "}`}, 400, "pause needs a reason"},
		{"a pause with a long reason is refused", req{method: "POST", path: job + "/pause", body: `{"reason": "` + strings.Repeat("é", 501) + `"}`}, 400, "reason: 501 characters; at most 500"},
		{"a pause with an unknown field is refused", req{method: "POST", path: job + "/pause", body: `{"reason": "x", "for": "1h"}`}, 400, `unknown field "for"`},
		{"a pause until no time is refused", req{method: "POST", path: job + "/pause", body: `{"reason": "x", "until": "noon"}`}, 400, `until: "noon": want a time in RFC 3339`},
		{"a pause that would end in the past is a conflict", req{method: "POST", path: job + "/pause", body: `{"reason": "x", "until": "2020-01-01T00:00:00Z"}`}, 409, "the pause would end at 2020-01-01T00:00:00Z, which is not after now"},
		{"a pause whose reason is not a string is refused", req{method: "POST", path: job + "/pause", body: `{"reason": 7}`}, 400, "request body"},
		{"a pause whose field name differs in case is refused", req{method: "POST", path: job + "/pause", body: `{"REASON": "x"}`}, 400, `unknown field "REASON"; field names are case-sensitive: did you mean "reason"?`},
		{"a pause with its reason given twice is refused", req{method: "POST", path: job + "/pause", body: `{"reason": "x", "reason": "y"}`}, 400, `key "reason" given twice`},
		{"a pause with its reason given twice in two cases is refused", req{method: "POST", path: job + "/pause", body: `{"reason": "x", "Reason": "y"}`}, 400, `unknown field "Reason"`},
		{"a key given twice inside an unknown field is refused", req{method: "POST", path: job + "/trigger", body: `{"at": {"a": 1, "a": 2}}`}, 400, `body.at: key "a" given twice`},
		{"a trigger with a field is refused", req{method: "POST", path: job + "/trigger", body: `{"at": "now"}`}, 400, `unknown field "at"`},
		{"a body that is not JSON is refused", req{method: "POST", path: job + "/resume", body: `resume please`}, 400, "request body"},
		{"a body with data after the object is refused", req{method: "POST", path: job + "/abort", body: `{} {}`}, 400, "found more after it"},
		{"a body that is an array is refused", req{method: "POST", path: job + "/trigger", body: `[]`}, 400, "request body"},
		{"a body over 64 KiB is refused", req{method: "POST", path: job + "/pause", body: `{"reason": "` + strings.Repeat("x", 70<<10) + `"}`}, 400, "over 65536 bytes"},

		{"a remote change without a token is unauthorized", req{method: "POST", path: job + "/trigger", remote: true}, 401, "sign in"},
		{"a remote change with a wrong token is unauthorized", req{method: "POST", path: job + "/trigger", remote: true, token: "guess-guess-guess-guess"}, 401, "credentials refused"},
		{"a remote read without a token is unauthorized", req{method: "GET", path: job, remote: true}, 401, "sign in"},
		{"a forwarded change from a local proxy is not local", req{method: "POST", path: job + "/trigger", header: http.Header{"X-Forwarded-For": {"198.51.100.2"}}}, 401, "sign in"},
		{"a change to a rebound host name is not local", req{method: "POST", path: job + "/trigger", host: "evil.example:8080"}, 401, "sign in"},
		{"a cross-site change from a local browser is forbidden", req{method: "POST", path: job + "/trigger", header: http.Header{"Sec-Fetch-Site": {"cross-site"}}}, 403, "cross-origin request refused"},
		{"a cross-site change with the token is forbidden", req{method: "POST", path: job + "/pause", body: `{"reason": "x"}`, remote: true, token: adminToken, header: http.Header{"Origin": {"https://evil.example"}}}, 403, "cross-origin request refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h.t = t
			before := h.snapshot()
			a := h.do(c.req)
			if a.status != c.status {
				t.Errorf("status %d, want %d: %s", a.status, c.status, a.raw)
			}
			msg, _ := a.body["error"].(string)
			if !strings.Contains(msg, c.err) {
				t.Errorf("error %q, want it to contain %q (body %s)", msg, c.err, a.raw)
			}
			if len(a.body) != 1 {
				t.Errorf("error body has more than the error: %s", a.raw)
			}
			if c.status == 405 && a.header.Get("Allow") == "" {
				t.Errorf("405 without an Allow header")
			}
			if c.status == 401 && !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a Bearer challenge: %v", a.header)
			}
			h.unchanged(before, c.req.method+" "+c.req.path)
		})
	}
}
