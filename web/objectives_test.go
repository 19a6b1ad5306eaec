package web_test

import (
	"math"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/slo"
	"github.com/sundial-cron/sundial/web"
)

// The objectives' counters move with what the engine judges, by project
// and objective, and the budget spent is the bad events each weighted by
// their job's allowance: its rate over the events' is the burn rate.
func TestObjectiveMetricsCountEventsAndBudget(t *testing.T) {
	h := newHarness(t)
	h.expect(map[string]float64{
		`sundial_slo_events_total{project="",result="good",slo="lateness"}`: 0,
		`sundial_slo_events_total{project="",result="bad",slo="success"}`:   0,
		`sundial_slo_budget_spent_total{project="",slo="success"}`:          0,
	})
	h.define("m/ok", engine.Definition{Schedule: "* * * * *", Target: "noop",
		Objective: slo.Objective{Lateness: 30 * time.Second, Success: 0.99}})
	h.define("m/fail", engine.Definition{Schedule: "* * * * *", Target: "noop", Spec: []byte(`{"fail": true}`),
		Objective: slo.Objective{Success: 0.9}})
	h.define("m/none", engine.Definition{Schedule: "* * * * *", Target: "noop", Spec: []byte(`{"fail": true}`)})
	h.runUntil(t0.Add(3*time.Minute + 30*time.Second))

	got := h.expect(map[string]float64{
		`sundial_slo_events_total{project="m",result="good",slo="lateness"}`: 3,
		`sundial_slo_events_total{project="m",result="bad",slo="lateness"}`:  0,
		`sundial_slo_events_total{project="m",result="good",slo="success"}`:  3,
		`sundial_slo_events_total{project="m",result="bad",slo="success"}`:   3,
	})
	// Three failures of a 90% objective spend 3/(1-0.9) = 30 events'
	// worth: over six events, a burn rate of 5.
	if spent := got[`sundial_slo_budget_spent_total{project="m",slo="success"}`]; math.Abs(spent-30) > 1e-9 {
		t.Errorf("budget spent %v, want 30", spent)
	}
}

// Without --metrics-names the counters name no project: /metrics is open.
func TestObjectiveMetricsNameNoProjectUnasked(t *testing.T) {
	m := web.NewMetrics(nil)
	m.Judged("secret/job", slo.KindSuccess, 0.99, slo.Judgement{Good: 1, Total: 2})
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	if strings.Contains(body, "secret") {
		t.Errorf("/metrics names the project:\n%s", body)
	}
	if !strings.Contains(body, `sundial_slo_events_total{project="",result="bad",slo="success"} 1`) {
		t.Errorf("/metrics lacks the bad event, unlabelled:\n%s", body)
	}
}

// GET .../objectives judges a job's objectives over their window from the
// history the store keeps, as the console shows them: each objective's
// good and total events, ratio, budget left and whether it is met. A job
// without objectives, or unknown, is a 404 with a JSON error.
func TestTheAPIJudgesAJobsObjectives(t *testing.T) {
	h := newHarness(t)
	h.define("m/ok", engine.Definition{Schedule: "* * * * *", Target: "noop",
		Objective: slo.Objective{Lateness: 30 * time.Second, Success: 0.99}})
	h.define("m/fail", engine.Definition{Schedule: "* * * * *", Target: "noop", Spec: []byte(`{"fail": true}`),
		Objective: slo.Objective{Success: 0.9}})
	h.define("m/none", engine.Definition{Schedule: "* * * * *", Target: "noop"})
	h.runUntil(t0.Add(3*time.Minute + 30*time.Second))

	type attainment struct {
		Kind, Lateness            string
		Target, Ratio, BudgetLeft float64
		Good, Total               int
		Met                       bool
	}
	judged := func(job string) (window string, records int, got []attainment) {
		t.Helper()
		body := h.ok("GET", "/api/v1/projects/m/jobs/"+job+"/objectives", "", 200)
		if body["server_defaults"] != false {
			t.Errorf("%s: server_defaults %v, want false: its config sets them", job, body["server_defaults"])
		}
		for _, a := range body["attainments"].([]any) {
			m := a.(map[string]any)
			lateness, _ := m["lateness"].(string)
			got = append(got, attainment{Kind: m["kind"].(string), Lateness: lateness, Target: m["target"].(float64), Ratio: m["ratio"].(float64),
				BudgetLeft: m["budget_left"].(float64), Good: int(m["good"].(float64)), Total: int(m["total"].(float64)), Met: m["met"].(bool)})
		}
		return body["window"].(string), int(body["records"].(float64)), got
	}
	window, records, got := judged("ok")
	want := []attainment{
		{Kind: "lateness", Lateness: "30s", Target: 0.99, Ratio: 1, BudgetLeft: 1, Good: 3, Total: 3, Met: true},
		{Kind: "success", Target: 0.99, Ratio: 1, BudgetLeft: 1, Good: 3, Total: 3, Met: true},
	}
	if window != "168h0m0s" || records != 3 || !slices.Equal(got, want) {
		t.Errorf("m/ok: window %s, %d records, %+v; want 168h0m0s, 3, %+v", window, records, got, want)
	}
	// Three failures of a 90% objective spend three times its budget of
	// 0.3 events: 1 - 3/0.3 = -9 left.
	_, _, got = judged("fail")
	if len(got) != 1 || got[0].Kind != "success" || got[0].Good != 0 || got[0].Total != 3 || got[0].Met || math.Abs(got[0].BudgetLeft+9) > 1e-9 {
		t.Errorf("m/fail: %+v; want success, 0 good of 3, not met, -9 of the budget left", got)
	}
	for _, job := range []string{"none", "nosuch"} {
		a := h.do(req{method: "GET", path: "/api/v1/projects/m/jobs/" + job + "/objectives"})
		if a.status != 404 || a.body["error"] == nil {
			t.Errorf("m/%s: %d %s, want 404 with a JSON error", job, a.status, a.raw)
		}
	}
}
