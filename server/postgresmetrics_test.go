package server

import (
	"regexp"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sundial-cron/sundial/alerts"
)

// TestEveryPostgresMetricTheAlertsNameIsServed: the metrics of the
// PostgreSQL shape's own collectors that alerts/ names are the ones they
// describe (web's test checks the rest against a running server's
// /metrics).
func TestEveryPostgresMetricTheAlertsNameIsServed(t *testing.T) {
	described := map[string]bool{}
	ch := make(chan *prometheus.Desc, 64)
	postgresCollector{}.Describe(ch)
	fleetCollector{}.Describe(ch)
	close(ch)
	fqName := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	for d := range ch {
		described[fqName.FindStringSubmatch(d.String())[1]] = true
	}
	named := 0
	for file, names := range alerts.Metrics() {
		for _, name := range names {
			if !alerts.PostgresShapes(name) {
				continue
			}
			named++
			if !described[name] {
				t.Errorf("%s names %s, which the PostgreSQL shape's collectors do not serve", file, name)
			}
		}
	}
	if named == 0 {
		t.Error("alerts/ names no metric of the PostgreSQL shape's: the check checks nothing")
	}
}
