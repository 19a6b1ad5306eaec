package web

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sundial-cron/sundial/jobid"
	"github.com/sundial-cron/sundial/slo"
)

// objectiveMetrics count the events jobs' objectives judge, for burn-rate
// alerts in the SRE workbook's style (alerts/sundial.rules.yml). Jobs'
// objectives differ, so each bad event adds its job's share of an error
// budget, 1/(1-target), to budgetSpent: the rate of budgetSpent over the
// rate of events is then the burn rate of whatever the series sum, one
// job's error ratio over its allowance, as for a single objective. They
// are labelled by project, not by job: with 100,000 jobs a series per job
// would be 400,000 series, where projects are few. The console has each
// job's own attainment, from the history the store keeps. Without
// Sources.Names the project label is left empty (Prometheus drops it).
type objectiveMetrics struct {
	events      *prometheus.CounterVec
	budgetSpent *prometheus.CounterVec
}

func newObjectiveMetrics() *objectiveMetrics {
	o := &objectiveMetrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sundial_slo_events_total",
			Help: "Events judged against jobs' objectives, by objective (lateness: first launches of scheduled occurrences and occurrences missed; success: invocations that succeeded or failed), result (good, bad) and, with --metrics-names, project.",
		}, []string{"project", "slo", "result"}),
		budgetSpent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sundial_slo_budget_spent_total",
			Help: "Bad events weighted by their job's error budget, 1/(1-target) each: its rate over sundial_slo_events_total's is the burn rate (1: the budget lasts exactly the window).",
		}, []string{"project", "slo"}),
	}
	// Series that exist from the start at 0 make rate() work before the
	// first event of their kind.
	for _, k := range []slo.Kind{slo.KindLateness, slo.KindSuccess} {
		o.events.WithLabelValues("", string(k), "good")
		o.events.WithLabelValues("", string(k), "bad")
		o.budgetSpent.WithLabelValues("", string(k))
	}
	return o
}

// Judged counts events of a job's objectives (engine.ObjectiveObserver).
func (m *Metrics) Judged(jobID string, kind slo.Kind, target float64, j slo.Judgement) {
	project := ""
	if m.names() {
		project = jobid.Split(jobID).Project
	}
	o := m.objectives
	bad := j.Total - j.Good
	o.events.WithLabelValues(project, string(kind), "good").Add(float64(j.Good))
	o.events.WithLabelValues(project, string(kind), "bad").Add(float64(bad))
	if bad > 0 && target < 1 {
		o.budgetSpent.WithLabelValues(project, string(kind)).Add(float64(bad) / (1 - target))
	}
}

// names reports whether the metrics may name jobs and projects (Sources).
func (m *Metrics) names() bool {
	m.troubles.mu.Lock()
	defer m.troubles.mu.Unlock()
	return m.troubles.src.Names
}
