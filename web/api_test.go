package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/engine/enginetest"
	"github.com/sundial-cron/sundial/statemachine"
)

// fixture defines jobs in two projects and runs them to 10:02:30:
//
//	billing/nightly  every minute, noop: 10:01 and 10:02 SUCCEEDED
//	billing/report   daily at noon in New York, failing: nothing yet
//	billing/worker   every minute, async: 10:01 RUNNING, 10:02 SKIPPED (overrun)
//	ops/heartbeat    DISABLED ("removed from config")
//
// applied as revisions r1 (billing) and r7 (ops) at 10:00, and a project
// broken whose only revision was refused, as the config refresher records
// them in the store.
func fixture(t *testing.T) *harness {
	h := newHarness(t)
	billing := engine.Revision{ID: "r1", File: "configs/billing.yaml", Jobs: []engine.Job{
		{ID: "billing/nightly", Definition: engine.Definition{Schedule: "* * * * *", Target: "noop", Policy: statemachine.Policy{Timeout: time.Minute}}},
		{ID: "billing/report", Definition: engine.Definition{Schedule: "0 12 * * *", TimeZone: "America/New_York", Target: "noop", Spec: json.RawMessage(`{"fail": true}`)}},
		{ID: "billing/worker", Definition: engine.Definition{Schedule: "* * * * *", Target: "async"}},
	}}
	ops := engine.Revision{ID: "r7", File: "configs/ops.yaml", Jobs: []engine.Job{
		{ID: "ops/heartbeat", Definition: engine.Definition{Schedule: "@every 30s", Target: "noop"}},
	}}
	for project, rev := range map[string]engine.Revision{"billing": billing, "ops": ops} {
		if err := h.eng.ApplyProject(h.ctx, project, rev); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.eng.Disable(h.ctx, "ops/heartbeat", statemachine.Reason{Kind: statemachine.ReasonRemovedFromConfig}); err != nil {
		t.Fatal(err)
	}
	if err := h.eng.RecordConfigError(h.ctx, "broken", "configs/broken.yaml", "configs/broken.yaml:3: jobs[0].schedule: bad field", t0, nil); err != nil {
		t.Fatal(err)
	}
	h.runUntil(t0.Add(2*time.Minute + 30*time.Second))
	return h
}

func TestListProjectsCountsJobsByStateAndShowsConfigStatus(t *testing.T) {
	h := fixture(t)
	body := h.ok("GET", "/api/v1/projects", "", http.StatusOK)
	want := []struct {
		project string
		counts  map[string]float64
		total   float64
		rev     any
		err     any
	}{
		{"billing", map[string]float64{"SCHEDULED": 2, "RUNNING": 1}, 3, "r1", nil},
		{"broken", nil, 0, nil, "configs/broken.yaml:3: jobs[0].schedule: bad field"},
		{"ops", map[string]float64{"DISABLED": 1}, 1, "r7", nil},
	}
	ps := get(body, "projects").([]any)
	if len(ps) != len(want) {
		t.Fatalf("%d projects, want %d: %v", len(ps), len(want), ps)
	}
	for i, w := range want {
		p := ps[i]
		if got := get(p, "project"); got != w.project {
			t.Errorf("project %d is %v, want %s", i, got, w.project)
		}
		for _, st := range statemachine.States {
			if got := get(p, "jobs", string(st)); got != w.counts[string(st)] {
				t.Errorf("%s: %s jobs = %v, want %v", w.project, st, got, w.counts[string(st)])
			}
		}
		if got := get(p, "total"); got != w.total {
			t.Errorf("%s: total %v, want %v", w.project, got, w.total)
		}
		if got := get(p, "config", "revision"); got != w.rev {
			t.Errorf("%s: revision %v, want %v", w.project, got, w.rev)
		}
		if got := get(p, "config", "error"); got != w.err {
			t.Errorf("%s: config error %v, want %v", w.project, got, w.err)
		}
	}
	if got := get(ps[0], "config", "loaded_at"); got != "2026-03-02T10:00:00Z" {
		t.Errorf("billing loaded_at %v", got)
	}
}

func TestListProjectsWithoutCountJobsPagesThroughTheStore(t *testing.T) {
	h := fixture(t)
	want := h.ok("GET", "/api/v1/projects", "", http.StatusOK)
	// A store that offers only store.Store, as the cloud one does.
	h.handler = newHandler(h, plainStore{h.st}, adminToken, true)
	got := h.ok("GET", "/api/v1/projects", "", http.StatusOK)
	if !equalJSON(got, want) {
		t.Errorf("counted by paging: %v\nwant %v", got, want)
	}
}

func TestListJobsShowsScheduleStateAndLastInvocation(t *testing.T) {
	h := fixture(t)
	body := h.ok("GET", "/api/v1/projects/billing/jobs", "", http.StatusOK)
	jobs := get(body, "jobs").([]any)
	if len(jobs) != 3 {
		t.Fatalf("%d jobs, want 3: %v", len(jobs), jobs)
	}
	checks := []struct {
		job  int
		path []any
		want any
	}{
		{0, []any{"id"}, "billing/nightly"},
		{0, []any{"project"}, "billing"},
		{0, []any{"job"}, "nightly"},
		{0, []any{"state"}, "SCHEDULED"},
		{0, []any{"schedule"}, "* * * * *"},
		{0, []any{"time_zone"}, "UTC"},
		{0, []any{"target"}, "noop"},
		{0, []any{"next_fire_time"}, "2026-03-02T10:03:00Z"},
		{0, []any{"last_invocation", "id"}, "20260302T100200Z"},
		{0, []any{"last_invocation", "status"}, "SUCCEEDED"},
		{0, []any{"last_invocation", "occurrence"}, "2026-03-02T10:02:00Z"},
		{1, []any{"id"}, "billing/report"},
		{1, []any{"time_zone"}, "America/New_York"},
		{1, []any{"next_fire_time"}, "2026-03-02T17:00:00Z"},
		{1, []any{"last_invocation"}, nil},
		{2, []any{"id"}, "billing/worker"},
		{2, []any{"state"}, "RUNNING"},
		{2, []any{"last_invocation", "status"}, "SKIPPED"},
		{2, []any{"last_invocation", "reason"}, "overrun"},
	}
	for _, c := range checks {
		if got := get(jobs[c.job], c.path...); got != c.want {
			t.Errorf("jobs[%d] %v = %v, want %v", c.job, c.path, got, c.want)
		}
	}
	if got := get(body, "next_cursor"); got != nil {
		t.Errorf("next_cursor %v on the only page", got)
	}

	body = h.ok("GET", "/api/v1/projects/ops/jobs", "", http.StatusOK)
	if got := get(body, "jobs", 0, "reason"); got != "removed from config" {
		t.Errorf("disabled job's reason %v", got)
	}
	if got := get(body, "jobs", 0, "next_fire_time"); got != nil {
		t.Errorf("disabled job's next fire time %v", got)
	}
	// A project the config source knows but with no jobs yet is empty,
	// not unknown.
	body = h.ok("GET", "/api/v1/projects/broken/jobs", "", http.StatusOK)
	if got := get(body, "jobs"); len(got.([]any)) != 0 {
		t.Errorf("broken project lists jobs %v", got)
	}
}

func TestGetJobShowsDefinitionActiveAndInvocations(t *testing.T) {
	h := fixture(t)
	body := h.ok("GET", "/api/v1/projects/billing/jobs/worker", "", http.StatusOK)
	checks := []struct {
		path []any
		want any
	}{
		{[]any{"id"}, "billing/worker"},
		{[]any{"state"}, "RUNNING"},
		{[]any{"definition", "timeout"}, "0s"},
		{[]any{"active", 0, "id"}, "20260302T100100Z"},
		{[]any{"active", 0, "phase"}, "RUNNING"},
		{[]any{"active", 0, "attempt"}, float64(1)},
		{[]any{"invocations", 0, "id"}, "20260302T100200Z"},
		{[]any{"invocations", 0, "status"}, "SKIPPED"},
		{[]any{"invocations", 1, "id"}, "20260302T100100Z"},
		{[]any{"invocations", 1, "status"}, "RUNNING"},
		{[]any{"invocations", 1, "started"}, "2026-03-02T10:01:00Z"},
	}
	for _, c := range checks {
		if got := get(body, c.path...); got != c.want {
			t.Errorf("%v = %v, want %v", c.path, got, c.want)
		}
	}
	body = h.ok("GET", "/api/v1/projects/billing/jobs/report", "", http.StatusOK)
	if got := get(body, "definition", "spec", "fail"); got != true {
		t.Errorf("report's spec.fail = %v, want true", got)
	}
	if got := get(body, "invocations"); got == nil || len(got.([]any)) != 0 {
		t.Errorf("report's invocations %v, want []", got)
	}
}

func TestGetInvocationShowsItsLog(t *testing.T) {
	h := fixture(t)
	body := h.ok("GET", "/api/v1/projects/billing/jobs/nightly/invocations/20260302T100100Z", "", http.StatusOK)
	if get(body, "status") != "SUCCEEDED" || get(body, "job_id") != "billing/nightly" || get(body, "ended") != "2026-03-02T10:01:00Z" {
		t.Errorf("invocation %v", body)
	}
	log, _ := get(body, "log").(string)
	for _, want := range []string{"attempt 1 QUEUED", "attempt 1 LAUNCHING", "attempt 1 SUCCEEDED: noop: done"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

// A synchronous target's call is the attempt's run: while it lasts, the
// API shows the invocation RUNNING, as the job's active one and as its
// record, not LAUNCHING, which reads as a launch that is stuck.
func TestAnInvocationWhoseCallIsUnderWayReadsRUNNING(t *testing.T) {
	h := newHarness(t)
	rev := engine.Revision{ID: "r1", File: "configs/billing.yaml", Jobs: []engine.Job{
		{ID: "billing/held", Definition: engine.Definition{Schedule: "* * * * *", Target: "held"}},
	}}
	if err := h.eng.ApplyProject(h.ctx, "billing", rev); err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- enginetest.RunUntil(h.ctx, h.clk, h.st, h.disp, h.wd, t0.Add(time.Minute)) }()
	select {
	case <-h.held.called:
	case err := <-ran:
		t.Fatalf("the occurrence was run (%v) without calling the target", err)
	}
	released := false
	defer func() {
		if !released {
			close(h.held.release)
			<-ran
		}
	}()

	body := h.ok("GET", "/api/v1/projects/billing/jobs/held", "", http.StatusOK)
	for _, c := range []struct {
		path []any
		want any
	}{
		{[]any{"state"}, "RUNNING"},
		{[]any{"active", 0, "id"}, "20260302T100100Z"},
		{[]any{"active", 0, "phase"}, "RUNNING"},
		{[]any{"invocations", 0, "status"}, "RUNNING"},
		{[]any{"invocations", 0, "started"}, "2026-03-02T10:01:00Z"},
	} {
		if got := get(body, c.path...); got != c.want {
			t.Errorf("during the call, %v = %v, want %v", c.path, got, c.want)
		}
	}
	path := "/api/v1/projects/billing/jobs/held/invocations/20260302T100100Z"
	if got := get(h.ok("GET", path, "", http.StatusOK), "status"); got != "RUNNING" {
		t.Errorf("during the call, the invocation's status = %v, want RUNNING", got)
	}

	close(h.held.release)
	released = true
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if got := get(h.ok("GET", path, "", http.StatusOK), "status"); got != "SUCCEEDED" {
		t.Errorf("after the call, the invocation's status = %v, want SUCCEEDED", got)
	}
}

func TestTriggerRunsTheJobNow(t *testing.T) {
	h := fixture(t)
	body := h.ok("POST", "/api/v1/projects/billing/jobs/report/trigger", "", http.StatusAccepted)
	if get(body, "invocation") != "manual-1" || get(body, "job", "last_invocation", "status") != "QUEUED" {
		t.Fatalf("trigger answered %v", body)
	}
	h.runUntil(h.clock())
	body = h.ok("GET", "/api/v1/projects/billing/jobs/report/invocations/manual-1", "", http.StatusOK)
	if get(body, "status") != "FAILED" || get(body, "manual") != true || get(body, "message") != "noop: failing as asked" {
		t.Errorf("the triggered invocation %v", body)
	}
	// {} is as good as no body.
	body = h.ok("POST", "/api/v1/projects/billing/jobs/report/trigger", "{}", http.StatusAccepted)
	if get(body, "invocation") != "manual-2" {
		t.Errorf("second trigger answered %v", body)
	}
}

// A pause with an end says when it ends, and the job resumes by itself
// then, the trail saying so.
func TestPauseUntil(t *testing.T) {
	h := fixture(t)
	body := h.ok("POST", "/api/v1/projects/billing/jobs/nightly/pause", `{"reason": "db migration", "until": "2026-03-02T10:30:00Z"}`, http.StatusOK)
	if get(body, "job", "state") != "PAUSED" || get(body, "job", "paused_until") != "2026-03-02T10:30:00Z" {
		t.Fatalf("pause answered %v", body)
	}
	h.runUntil(t0.Add(31 * time.Minute))
	body = h.ok("GET", "/api/v1/projects/billing/jobs/nightly", "", http.StatusOK)
	if get(body, "state") == "PAUSED" || get(body, "paused_until") != nil {
		t.Fatalf("after the pause's end the job is %v", body)
	}
	if get(body, "audit", 0, "by") != "sundial" || get(body, "audit", 1, "until") != "2026-03-02T10:30:00Z" {
		t.Errorf("audit %v", get(body, "audit"))
	}
}

func TestPauseAndResume(t *testing.T) {
	h := fixture(t)
	body := h.ok("POST", "/api/v1/projects/billing/jobs/nightly/pause", `{"reason": "  db migration  "}`, http.StatusOK)
	if get(body, "job", "state") != "PAUSED" || get(body, "job", "reason") != "db migration" || get(body, "job", "next_fire_time") != nil {
		t.Fatalf("pause answered %v", body)
	}
	h.runUntil(t0.Add(5*time.Minute + 30*time.Second))
	body = h.ok("POST", "/api/v1/projects/billing/jobs/nightly/resume", "", http.StatusOK)
	if get(body, "job", "state") != "SCHEDULED" || get(body, "job", "reason") != nil || get(body, "job", "next_fire_time") != "2026-03-02T10:06:00Z" {
		t.Fatalf("resume answered %v", body)
	}
	if got := get(body, "job", "last_invocation", "reason"); got != "paused" {
		t.Errorf("what fell in the pause is recorded as %v, want paused", got)
	}
	// Resuming a job that is not paused changes nothing, and says so
	// with the job as it is.
	before := h.snapshot()
	h.ok("POST", "/api/v1/projects/billing/jobs/nightly/resume", "", http.StatusOK)
	h.unchanged(before, "resuming a scheduled job")
}

func TestAbortEndsUnfinishedInvocations(t *testing.T) {
	h := fixture(t)
	body := h.ok("POST", "/api/v1/projects/billing/jobs/worker/invocations/20260302T100100Z/abort", "", http.StatusOK)
	if get(body, "invocation", "status") != "ABORTED" || get(body, "invocation", "message") != "aborted by an admin" {
		t.Fatalf("abort answered %v", body)
	}
	h.runUntil(t0.Add(3*time.Minute + 30*time.Second))
	body = h.ok("GET", "/api/v1/projects/billing/jobs/worker", "", http.StatusOK)
	if get(body, "state") != "RUNNING" || get(body, "active", 0, "id") != "20260302T100300Z" {
		t.Fatalf("after the abort the 10:03 run should be running: %v", body)
	}
	body = h.ok("POST", "/api/v1/projects/billing/jobs/worker/abort", "", http.StatusOK)
	if get(body, "job", "state") != "SCHEDULED" || get(body, "job", "last_invocation", "status") != "ABORTED" {
		t.Errorf("aborting the job answered %v", body)
	}
}
