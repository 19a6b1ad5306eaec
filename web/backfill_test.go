package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
)

// TestBackfillThroughTheAPI: bad ranges and one past the retention age get
// a 400 naming why and change nothing; a backfill shows on the job while
// under way, a second one is a conflict, its invocations are marked
// backfill in the history, each occurrence runs once, and a cancel with
// nothing under way is a conflict.
func TestBackfillThroughTheAPI(t *testing.T) {
	h := newHarness(t)
	h.define("p/job", engine.Definition{Schedule: "*/5 * * * *", Target: "noop"})
	const path = "/api/v1/projects/p/jobs/job"
	for _, tt := range []struct{ body, says string }{
		{`{"from": "yesterday", "to": "2026-03-02T10:00:00Z"}`, `RFC 3339 (2026-11-01T00:00:00Z), not \"yesterday\"`},
		{`{"from": "2026-03-02T09:00:00Z"}`, `RFC 3339 (2026-11-01T00:00:00Z), not \"\"`},
		{`{"from": "2026-03-02T10:00:00Z", "to": "2026-03-02T09:00:00Z"}`, "range is empty"},
		{`{"from": "2026-01-01T00:00:00Z", "to": "2026-03-02T09:00:00Z"}`, "retention"},
		{`{"from": "2026-03-02T09:00:00Z", "to": "2026-03-02T10:00:00Z", "rate": 3}`, "rate"},
	} {
		before := h.snapshot()
		a := h.do(req{method: "POST", path: path + "/backfill", body: tt.body})
		if a.status != 400 || !strings.Contains(a.raw, tt.says) {
			t.Errorf("backfill %s: %d %s, want 400 saying %q", tt.body, a.status, a.raw, tt.says)
		}
		h.unchanged(before, "a refused backfill")
	}
	h.ok("POST", path+"/backfill", `{"from": "2026-03-02T09:40:00Z", "to": "2026-03-02T12:00:00Z"}`, 202)
	body := h.ok("GET", path, "", 200)
	if get(body, "backfill", "to") != "2026-03-02T10:00:00.000000001Z" || get(body, "active", 0, "backfill") != true {
		t.Errorf("the job after a backfill: backfill %v, active %v", get(body, "backfill"), get(body, "active"))
	}
	h.ok("POST", path+"/backfill", `{"from": "2026-03-02T09:00:00Z", "to": "2026-03-02T10:00:00Z"}`, 409)
	h.runUntil(t0.Add(time.Minute))
	body = h.ok("GET", path, "", 200)
	if get(body, "backfill") != nil {
		t.Errorf("the backfill is still under way after its occurrences ran: %v", get(body, "backfill"))
	}
	want := map[string]bool{}
	for _, m := range []int{40, 45, 50, 55} {
		want[statemachine.OccurrenceID(t0.Add(time.Duration(m-60)*time.Minute))] = true
	}
	want[statemachine.OccurrenceID(t0)] = true
	seen := map[string]int{}
	for _, inv := range get(body, "invocations").([]any) {
		id := get(inv, "id").(string)
		seen[id]++
		if !want[id] || get(inv, "backfill") != true || get(inv, "status") != "SUCCEEDED" {
			t.Errorf("invocation %v: want one of %v, SUCCEEDED, backfill", inv, want)
		}
	}
	for id := range want {
		if seen[id] != 1 {
			t.Errorf("%s recorded %d times, want once", id, seen[id])
		}
	}
	h.ok("POST", path+"/cancel-backfill", "", 409)
}
