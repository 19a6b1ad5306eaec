package server

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
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
	for _, file := range []string{"../alerts/sundial.rules.yml", "../alerts/grafana-dashboard.json"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range regexp.MustCompile(`\bsundial_[a-z_]+`).FindAllString(string(b), -1) {
			if !strings.HasPrefix(name, "sundial_postgres_") && !strings.HasPrefix(name, "sundial_instances_") {
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
