package web_test

import (
	"math"
	"net/http/httptest"
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
