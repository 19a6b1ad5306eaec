package web_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
)

// TestATriggerTheOverlapPolicyWillSkipSaysSo: a trigger of billing/worker,
// whose 10:01 still runs under overlap skip, is recorded as skipped at
// once and the answer says so and why; one of an idle job is queued; one
// under queue_one waits; one under replace names what it replaced.
func TestATriggerTheOverlapPolicyWillSkipSaysSo(t *testing.T) {
	h := fixture(t)
	h.define("billing/queued", engine.Definition{Schedule: "triggered", Target: "async", Policy: statemachine.Policy{Overlap: statemachine.OverlapQueueOne}})
	h.define("billing/replaced", engine.Definition{Schedule: "triggered", Target: "async", Policy: statemachine.Policy{Overlap: statemachine.OverlapReplace}})
	for _, job := range []string{"queued", "replaced"} {
		h.ok("POST", "/api/v1/projects/billing/jobs/"+job+"/trigger", "", http.StatusAccepted)
	}
	for _, tc := range []struct {
		job  string
		want map[string]any
	}{
		{"worker", map[string]any{"invocation": "manual-1", "outcome": "skipped", "skip_reason": "overrun"}},
		{"nightly", map[string]any{"invocation": "manual-1", "outcome": "queued"}},
		{"queued", map[string]any{"invocation": "manual-2", "outcome": "waiting"}},
		{"replaced", map[string]any{"invocation": "manual-2", "outcome": "queued", "replaced": []any{map[string]any{"id": "manual-1", "attempt": float64(1)}}}},
	} {
		body := h.ok("POST", "/api/v1/projects/billing/jobs/"+tc.job+"/trigger", "", http.StatusAccepted)
		delete(body, "job")
		if !reflect.DeepEqual(body, tc.want) {
			t.Errorf("trigger of %s answered %v; want %v", tc.job, body, tc.want)
		}
	}
}

// TestRequestsThatChangeNothingSaySo: a pause with the reason the job
// has, a resume of a job not paused and an abort with nothing unfinished
// answer changed false (or no aborted invocation) and change nothing; a
// pause with a new reason replaces it, names the one replaced, and is in
// the audit trail; an abort names what it ended and on which attempt.
func TestRequestsThatChangeNothingSaySo(t *testing.T) {
	h := fixture(t)
	const nightly = "/api/v1/projects/billing/jobs/nightly"
	body := h.ok("POST", nightly+"/pause", `{"reason": "db migration"}`, http.StatusOK)
	if body["changed"] != true || body["previous_reason"] != nil {
		t.Errorf("the first pause answered %v; want changed and no previous reason", body)
	}
	before := h.snapshot()
	if body := h.ok("POST", nightly+"/pause", `{"reason": "db migration"}`, http.StatusOK); body["changed"] != false {
		t.Errorf("a pause with the same reason answered %v; want changed false", body)
	}
	h.unchanged(before, "a pause with the same reason")
	body = h.ok("POST", nightly+"/pause", `{"reason": "db migration, until 14:00"}`, http.StatusOK)
	if body["changed"] != true || body["previous_reason"] != "db migration" || get(body, "job", "reason") != "db migration, until 14:00" {
		t.Errorf("a pause with a new reason answered %v", body)
	}
	if audit := get(h.ok("GET", nightly, "", http.StatusOK), "audit"); get(audit, 0, "reason") != "db migration, until 14:00" || get(audit, 1, "reason") != "db migration" {
		t.Errorf("audit %v; want both pauses, newest first", audit)
	}
	if body := h.ok("POST", nightly+"/resume", "", http.StatusOK); body["changed"] != true {
		t.Errorf("resume answered %v; want changed", body)
	}
	before = h.snapshot()
	if body := h.ok("POST", nightly+"/resume", "", http.StatusOK); body["changed"] != false {
		t.Errorf("a resume of a scheduled job answered %v; want changed false", body)
	}
	if body := h.ok("POST", nightly+"/abort", "", http.StatusOK); !reflect.DeepEqual(body["aborted"], []any{}) {
		t.Errorf("an abort with nothing unfinished answered %v; want aborted []", body)
	}
	h.unchanged(before, "a resume of a scheduled job and an abort of an idle one")
	body = h.ok("POST", "/api/v1/projects/billing/jobs/worker/abort", "", http.StatusOK)
	if want := []any{map[string]any{"id": "20260302T100100Z", "attempt": float64(1)}}; !reflect.DeepEqual(body["aborted"], want) {
		t.Errorf("the abort of worker answered %v; want aborted %v", body, want)
	}
}

// TestABulkResumeThatMatchesNothingListsTheReasonsItSaw: a resume of the
// jobs paused for a reason none has resumes nothing and answers the
// reasons the paused ones have, with how many.
func TestABulkResumeThatMatchesNothingListsTheReasonsItSaw(t *testing.T) {
	h := fixture(t)
	h.ok("POST", "/api/v1/projects/billing/pause", `{"reason": "incident 7"}`, http.StatusOK)
	h.ok("POST", "/api/v1/projects/billing/jobs/report/pause", `{"reason": "flaky upstream"}`, http.StatusOK)
	body := h.ok("POST", "/api/v1/projects/billing/resume", `{"paused_for": "incident 8"}`, http.StatusOK)
	if want := map[string]any{"incident 7": float64(2), "flaky upstream": float64(1)}; len(strs(body["changed"])) != 0 || !reflect.DeepEqual(body["other_reasons"], want) {
		t.Errorf("resume for incident 8 answered %v; want nothing changed and other_reasons %v", body, want)
	}
}

// TestAJobShowsItsRevisionAndNextFireTimes: the detail of a job names the
// revision that defined it and its next five occurrences, in the
// schedule's zone as instants; a paused job has none.
func TestAJobShowsItsRevisionAndNextFireTimes(t *testing.T) {
	h := fixture(t)
	body := h.ok("GET", "/api/v1/projects/billing/jobs/report", "", http.StatusOK)
	want := []any{"2026-03-02T17:00:00Z", "2026-03-03T17:00:00Z", "2026-03-04T17:00:00Z", "2026-03-05T17:00:00Z", "2026-03-06T17:00:00Z"}
	if body["revision"] != "r1" || !reflect.DeepEqual(body["next_fire_times"], want) {
		t.Errorf("report's revision %v, next fire times %v; want r1 and %v", body["revision"], body["next_fire_times"], want)
	}
	h.ok("POST", "/api/v1/projects/billing/jobs/report/pause", `{"reason": "x"}`, http.StatusOK)
	if got := h.ok("GET", "/api/v1/projects/billing/jobs/report", "", http.StatusOK)["next_fire_times"]; !reflect.DeepEqual(got, []any{}) {
		t.Errorf("a paused job's next fire times %v; want []", got)
	}
}

// TestAnInvocationTellsHowMuchItsLogHadWritten: log_written and log_tail
// are the log's length while nothing was dropped from it.
func TestAnInvocationTellsHowMuchItsLogHadWritten(t *testing.T) {
	h := fixture(t)
	body := h.ok("GET", "/api/v1/projects/billing/jobs/nightly/invocations/20260302T100100Z", "", http.StatusOK)
	log, _ := body["log"].(string)
	if !strings.Contains(log, "SUCCEEDED") || body["log_written"] != float64(len(log)) || body["log_tail"] != float64(len(log)) {
		t.Errorf("log_written %v, log_tail %v for a log of %d bytes; want its length, both", body["log_written"], body["log_tail"], len(log))
	}
}
