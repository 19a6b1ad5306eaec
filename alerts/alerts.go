// Package alerts holds the Prometheus rules and the Grafana dashboard
// shipped for Sundial's metrics, and reads which metrics they name, so
// that the tests of the servers that serve them can check that none is
// named in vain: a metric renamed or dropped would leave an alert that
// never fires and a panel that is always empty.
package alerts

import (
	"embed"
	"regexp"
	"strings"
)

//go:embed sundial.rules.yml grafana-dashboard.json
var files embed.FS

// Metrics returns the metric names each shipped file names, by file.
func Metrics() map[string][]string {
	out := map[string][]string{}
	for _, name := range []string{"sundial.rules.yml", "grafana-dashboard.json"} {
		b, err := files.ReadFile(name)
		if err != nil {
			panic(err) // embedded above: cannot fail
		}
		out[name] = metricName.FindAllString(string(b), -1)
	}
	return out
}

var metricName = regexp.MustCompile(`\bsundial_[a-z_]+`)

// PostgresShapes reports whether name is a metric the PostgreSQL shape
// alone serves, from collectors of its own.
func PostgresShapes(name string) bool {
	return strings.HasPrefix(name, "sundial_postgres_") || strings.HasPrefix(name, "sundial_instances_")
}
