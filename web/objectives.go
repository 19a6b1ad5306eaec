package web

import (
	"net/http"
	"time"

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

// objectivesJSON is a job's objectives judged over their window from the
// history the store keeps (engine.Judge).
type objectivesJSON struct {
	// ServerDefaults: the job's config says nothing of objectives, and
	// these are the server's (serve --slo-*).
	ServerDefaults bool      `json:"server_defaults"`
	Window         string    `json:"window"`
	From           time.Time `json:"from"`
	Records        int       `json:"records"`
	// Truncated: the window holds more records than are judged
	// (engine.JudgeCap); the newest were.
	Truncated   bool             `json:"truncated,omitempty"`
	Attainments []attainmentJSON `json:"attainments"`
}

// attainmentJSON is one objective over the window.
type attainmentJSON struct {
	Kind string `json:"kind"` // lateness or success
	// Lateness is how late a first launch of a scheduled occurrence may
	// be and still count as on time (kind lateness).
	Lateness string  `json:"lateness,omitempty"`
	Target   float64 `json:"target"` // the fraction of good events promised
	Good     int     `json:"good"`
	Total    int     `json:"total"`
	Ratio    float64 `json:"ratio"` // good over total, 1 with none
	// BudgetLeft is the fraction of the error budget left: 1 with no bad
	// event, 0 when the bad events are exactly the budget, below 0 past it.
	BudgetLeft float64 `json:"budget_left"`
	Met        bool    `json:"met"`
}

// getObjectives judges a job's objectives; 404 for a job without any.
func (s *server) getObjectives(r *http.Request) (int, any, error) {
	jobID := jobIDOf(r)
	v, err := s.view(r, jobID)
	if err != nil {
		return 0, nil, err
	}
	j, ok, err := s.eng.Judge(r.Context(), v, s.eng.Now())
	switch {
	case err != nil:
		return 0, nil, err
	case !ok:
		return 0, nil, notFound("job %s has no objectives: its config sets none (slo:) and the server has no defaults (serve --slo-*)", jobID)
	}
	out := objectivesJSON{ServerDefaults: j.Defaults, Window: j.Objective.Window.String(), From: j.From.UTC(), Records: j.Records, Truncated: j.Truncated, Attainments: []attainmentJSON{}}
	for _, a := range j.Attainments {
		aj := attainmentJSON{Kind: string(a.Kind), Target: a.Target, Good: a.Good, Total: a.Total, Ratio: a.Ratio(), BudgetLeft: a.Budget(), Met: a.Met()}
		if a.Kind == slo.KindLateness {
			aj.Lateness = j.Objective.Lateness.String()
		}
		out.Attainments = append(out.Attainments, aj)
	}
	return http.StatusOK, out, nil
}
