package version

import "github.com/prometheus/client_golang/prometheus"

// Collector returns the gauge sundial_build_info{version,revision,goversion},
// always 1: the Prometheus convention for a build's facts, which a query
// joins onto other series (`* on(instance) group_left(version)
// sundial_build_info`) or counts by version during a rollout.
func Collector() prometheus.Collector {
	i := Get()
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "sundial_build_info",
		Help:        "Always 1; the labels say which build of Sundial runs: its version, the commit it was built from and the Go that built it.",
		ConstLabels: prometheus.Labels{"version": i.Version, "revision": i.Revision, "goversion": i.GoVersion},
	})
	g.Set(1)
	return g
}
