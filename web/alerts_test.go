package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/alerts"
	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/web"
)

// TestEveryMetricTheAlertsNameIsServed: a metric renamed or dropped here
// would leave an alert in alerts/ that can never fire, and a dashboard
// panel that is always empty. The server is brought to where every
// per-job series exists: a job failing, an attempt running long, a
// project's config recorded.
func TestEveryMetricTheAlertsNameIsServed(t *testing.T) {
	h := newHarness(t)
	rev := engine.Revision{ID: "r1", Jobs: []engine.Job{
		{ID: "m/fail", Definition: engine.Definition{Schedule: "* * * * *", Target: "noop", Spec: []byte(`{"fail": true}`)}},
		{ID: "m/async", Definition: engine.Definition{Schedule: "* * * * *", Target: "async"}},
	}}
	if err := h.eng.ApplyProject(h.ctx, "m", rev); err != nil {
		t.Fatal(err)
	}
	h.runUntil(t0.Add(2*time.Minute + web.DefaultLongRun))
	served := map[string]bool{}
	for sample := range h.scrape() {
		name, _, _ := strings.Cut(sample, "{")
		served[name] = true
	}
	for file, names := range alerts.Metrics() {
		if len(names) == 0 {
			t.Errorf("%s names no metric", file)
		}
		for _, name := range names {
			if alerts.PostgresShapes(name) {
				continue // served by the PostgreSQL shape's own collectors: server's TestEveryPostgresMetricTheAlertsNameIsServed
			}
			if !served[name] {
				t.Errorf("%s names %s, which /metrics does not serve", file, name)
			}
		}
	}
}
