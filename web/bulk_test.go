package web_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
)

// strs reads a JSON list of strings.
func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestBulkPauseAndResumeASelection: one request pauses the jobs a prefix
// picks, each with its own audit entry; repeating it (as after a request
// that stopped half-way) changes nothing more; resuming by the pause's
// reason leaves a job paused for another reason paused.
func TestBulkPauseAndResumeASelection(t *testing.T) {
	h := newHarness(t)
	for _, id := range []string{"shop/etl-a", "shop/etl-b", "shop/etl-c", "shop/etl-d", "shop/web"} {
		h.define(id, engine.Definition{Schedule: "* * * * *", Target: "noop"})
	}
	// A DISABLED job refuses a pause: it is picked, and left unchanged.
	if err := h.eng.Disable(h.ctx, "shop/etl-d", statemachine.Reason{Kind: statemachine.ReasonDisabledInConfig}); err != nil {
		t.Fatal(err)
	}
	h.define("other/etl-a", engine.Definition{Schedule: "* * * * *", Target: "noop"})
	h.ok("POST", "/api/v1/projects/shop/jobs/etl-c/pause", `{"reason": "flaky upstream"}`, 200)
	h.runUntil(t0.Add(90 * time.Second))

	got := h.ok("POST", "/api/v1/projects/shop/pause", `{"reason": "incident 7", "prefix": "etl-"}`, 200)
	if c, u := strs(got["changed"]), strs(got["unchanged"]); !slices.Equal(c, []string{"shop/etl-a", "shop/etl-b"}) || !slices.Equal(u, []string{"shop/etl-c", "shop/etl-d"}) {
		t.Fatalf("pause: changed %v, unchanged %v; want etl-a and etl-b changed, etl-c and etl-d unchanged", c, u)
	}
	state := func(id string) (string, string, []any) {
		j := h.ok("GET", "/api/v1/projects/"+id, "", 200)
		r, _ := j["reason"].(string)
		a, _ := j["audit"].([]any)
		return j["state"].(string), r, a
	}
	for _, tc := range []struct{ path, state, reason string }{
		{"shop/jobs/etl-a", "PAUSED", "incident 7"},
		{"shop/jobs/etl-b", "PAUSED", "incident 7"},
		{"shop/jobs/etl-c", "PAUSED", "flaky upstream"},
		{"shop/jobs/web", "SCHEDULED", ""},
		{"other/jobs/etl-a", "SCHEDULED", ""},
	} {
		if st, r, _ := state(tc.path); st != tc.state || r != tc.reason {
			t.Errorf("%s: %s %q; want %s %q", tc.path, st, r, tc.state, tc.reason)
		}
	}
	_, _, audit := state("shop/jobs/etl-a")
	if len(audit) != 1 || get(audit[0], "action") != "pause" || get(audit[0], "reason") != "incident 7" || get(audit[0], "by") != "local" {
		t.Errorf("etl-a's audit %v; want one pause for incident 7 by local", audit)
	}

	// Repeating the request finishes what a stopped one left, and touches
	// nothing it already did.
	before := h.snapshot()
	again := h.ok("POST", "/api/v1/projects/shop/pause", `{"reason": "incident 7", "prefix": "etl-"}`, 200)
	if c := strs(again["changed"]); len(c) != 0 {
		t.Errorf("a repeated pause changed %v", c)
	}
	h.unchanged(before, "a repeated bulk pause")

	got = h.ok("POST", "/api/v1/projects/shop/resume", `{"paused_for": "incident 7"}`, 200)
	if c := strs(got["changed"]); !slices.Equal(c, []string{"shop/etl-a", "shop/etl-b"}) {
		t.Errorf("resume changed %v; want etl-a and etl-b", c)
	}
	if st, r, _ := state("shop/jobs/etl-c"); st != "PAUSED" || r != "flaky upstream" {
		t.Errorf("etl-c after the incident's resume: %s %q; want still paused for its own reason", st, r)
	}
	if st, _, audit := state("shop/jobs/etl-b"); st != "SCHEDULED" || len(audit) != 2 || get(audit[0], "action") != "resume" {
		t.Errorf("etl-b after resume: %s, audit %v", st, audit)
	}
}

// TestBulkPauseRefusesBadInputAndChangesNothing: every malformed request
// is a 400 that names what is wrong, and no job moves.
func TestBulkPauseRefusesBadInputAndChangesNothing(t *testing.T) {
	h := newHarness(t)
	h.define("shop/a", engine.Definition{Schedule: "* * * * *", Target: "noop"})
	for _, tc := range []struct{ path, body string }{
		{"/api/v1/projects/shop/pause", `{}`},
		{"/api/v1/projects/shop/pause", `{"reason": "   "}`},
		{"/api/v1/projects/shop/pause", `{"reason": "x", "state": "ASLEEP"}`},
		{"/api/v1/projects/shop/pause", `{"reason": "x", "prefx": "a"}`},
		{"/api/v1/projects/shop/pause", fmt.Sprintf(`{"reason": %q}`, strings.Repeat("x", 501))},
		{"/api/v1/projects/shop/pause", `{"reason": "x", "until": "tomorrow"}`},
		{"/api/v1/projects/shop/resume", `{"reason": "x"}`},
	} {
		before := h.snapshot()
		a := h.do(req{method: "POST", path: tc.path, body: tc.body})
		if a.status != 400 || a.body["error"] == nil {
			t.Errorf("%s %s: %d %s; want 400 with an error", tc.path, tc.body, a.status, a.raw)
		}
		h.unchanged(before, "a refused bulk request")
	}
}

// TestABulkPauseUntilAnEnd: a bulk pause may end by itself, and says so
// on each job it pauses; an end that is not after now is a 409 that
// changes nothing.
func TestABulkPauseUntilAnEnd(t *testing.T) {
	h := newHarness(t)
	h.define("shop/a", engine.Definition{Schedule: "* * * * *", Target: "noop"})
	h.runUntil(t0.Add(30 * time.Second))
	before := h.snapshot()
	if a := h.do(req{method: "POST", path: "/api/v1/projects/shop/pause", body: `{"reason": "x", "until": "2026-03-02T09:00:00Z"}`}); a.status != 409 || a.body["error"] == nil {
		t.Errorf("a bulk pause ending in the past: %d %s; want 409 with an error", a.status, a.raw)
	}
	h.unchanged(before, "a bulk pause ending in the past")
	end := t0.Add(time.Hour).UTC().Format(time.RFC3339)
	got := h.ok("POST", "/api/v1/projects/shop/pause", `{"reason": "maintenance", "until": "`+end+`"}`, 200)
	if c := strs(got["changed"]); !slices.Equal(c, []string{"shop/a"}) {
		t.Fatalf("the bulk pause changed %v", c)
	}
	j := h.ok("GET", "/api/v1/projects/shop/jobs/a", "", 200)
	if j["state"] != "PAUSED" || j["paused_until"] != end {
		t.Errorf("shop/a: %v until %v; want PAUSED until %s", j["state"], j["paused_until"], end)
	}
}
