package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sundial-cron/sundial/store/postgres"
)

// postgresCollector serves, at each scrape, what an operator of the
// PostgreSQL shape watches of an instance's database use: its connections
// (are they enough, or do callers wait for one?) and its transactions
// (how many Updates each batch carries: docs/postgres.md).
type postgresCollector struct{ st *postgres.Store }

var (
	pgConnsDesc = prometheus.NewDesc("sundial_postgres_connections",
		"The instance's connections to PostgreSQL in its pool, by state: in_use, idle, opening. The LISTEN session is apart.", []string{"state"}, nil)
	pgMaxConnsDesc = prometheus.NewDesc("sundial_postgres_connections_max",
		"The most connections the instance's pool opens (--database-max-conns).", nil, nil)
	pgAcquiresDesc = prometheus.NewDesc("sundial_postgres_acquires_total",
		"Connections taken from the pool.", nil, nil)
	pgWaitsDesc = prometheus.NewDesc("sundial_postgres_acquire_waits_total",
		"Connections taken from the pool that had to be waited for: none was idle.", nil, nil)
	pgWaitSecondsDesc = prometheus.NewDesc("sundial_postgres_acquire_wait_seconds_total",
		"Time spent waiting for a connection when none was idle.", nil, nil)
	pgOpenedDesc = prometheus.NewDesc("sundial_postgres_connections_opened_total",
		"Connections the pool opened: a rate above the instance's restarts means PostgreSQL or a proxy closes them.", nil, nil)
	pgUpdatesDesc = prometheus.NewDesc("sundial_postgres_updates_total",
		"Job transactions (store Updates) committed.", nil, nil)
	pgTransactionsDesc = prometheus.NewDesc("sundial_postgres_transactions_total",
		"PostgreSQL transactions committed: batches of Updates, and the task queue's claims, acknowledgements and heartbeats.", nil, nil)
)

func (c postgresCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{pgConnsDesc, pgMaxConnsDesc, pgAcquiresDesc, pgWaitsDesc, pgWaitSecondsDesc, pgOpenedDesc, pgUpdatesDesc, pgTransactionsDesc} {
		ch <- d
	}
}

func (c postgresCollector) Collect(ch chan<- prometheus.Metric) {
	p, s := c.st.PoolStat(), c.st.Stats()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	gauge(pgConnsDesc, float64(p.AcquiredConns()), "in_use")
	gauge(pgConnsDesc, float64(p.IdleConns()), "idle")
	gauge(pgConnsDesc, float64(p.ConstructingConns()), "opening")
	gauge(pgMaxConnsDesc, float64(p.MaxConns()))
	counter(pgAcquiresDesc, float64(p.AcquireCount()))
	counter(pgWaitsDesc, float64(p.EmptyAcquireCount()))
	counter(pgWaitSecondsDesc, p.EmptyAcquireWaitTime().Seconds())
	counter(pgOpenedDesc, float64(p.NewConnsCount()))
	counter(pgUpdatesDesc, float64(s.Updates))
	counter(pgTransactionsDesc, float64(s.Commits))
}
