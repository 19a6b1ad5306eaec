package web

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sundial-cron/sundial/internal/version"
	"github.com/sundial-cron/sundial/notify"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/task"
)

// Backlog counts the tasks queued; *sqlite.Store is one. The cloud shape
// cannot count Cloud Tasks cheaply and passes nil.
type Backlog interface {
	CountTasks(ctx context.Context) (int, error)
}

// Metrics is the engine's Observer that keeps Prometheus metrics, and the
// handler that serves them. Per-job series exist only for jobs in trouble,
// at most MaxTroubledSeries of each kind (trouble.go): with 100,000 jobs a
// series per job would be 100,000 series.
type Metrics struct {
	reg   *prometheus.Registry
	ended *prometheus.CounterVec
	// endedAsLaunches is ended under its old name, which said launches
	// while it counted ends: kept one release for the dashboards that
	// read it, then removed.
	endedAsLaunches *prometheus.CounterVec
	lateness        prometheus.Histogram
	skipped         *prometheus.CounterVec
	repairs         prometheus.Counter
	disabled        *prometheus.CounterVec
	failures        *prometheus.CounterVec
	troubles        *troubles
	notified        *prometheus.CounterVec
	objectives      *objectiveMetrics
}

// latenessBuckets run from 10 ms (a healthy launch) to 10 minutes (a tick
// the watchdog had to repair, or a backlog after downtime).
var latenessBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// NewMetrics returns the metrics, with the task backlog read from backlog
// at each scrape (nil: no backlog gauge), and the shape's own collectors
// (the PostgreSQL shape's connections).
func NewMetrics(backlog Backlog, shape ...prometheus.Collector) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sundial_invocations_ended_total",
			Help: "Invocations that ended, by status: succeeded, failed or aborted (all attempts of one count once).",
		}, []string{"status"}),
		endedAsLaunches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sundial_launches_total",
			Help: "Deprecated, removed in the next release: use sundial_invocations_ended_total, the same count (this one counts invocations that ended, not launches). Invocations that ended, by result: succeeded, failed or aborted.",
		}, []string{"result"}),
		lateness: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "sundial_launch_lateness_seconds",
			Help:    "How long after its scheduled time (plus jitter) each attempt was handed to its target; its count is the attempts launched.",
			Buckets: latenessBuckets,
		}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sundial_skipped_occurrences_total",
			Help: "Occurrences that did not become invocations, by reason.",
		}, []string{"reason"}),
		repairs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sundial_watchdog_repairs_total",
			Help: "Jobs the watchdog repaired: a task re-issued or an overdue invocation ended.",
		}),
		disabled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sundial_jobs_disabled_total",
			Help: "Jobs that became DISABLED, by the kind of their reason.",
		}, []string{"reason"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sundial_task_failures_total",
			Help: "Deliveries of tasks that failed, by task kind and class: transient (delivered again) or permanent (the job disabled, the task dropped).",
		}, []string{"kind", "class"}),
		troubles: &troubles{},
		notified: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sundial_notifications_total",
			Help: "Notifications of jobs' notify:, by result: delivered, failed (refused, timed out, not 2xx) or rate_limited.",
		}, []string{"result"}),
		objectives: newObjectiveMetrics(),
	}
	for _, r := range notify.Results {
		m.notified.WithLabelValues(r)
	}
	// Series that exist from the start at 0 make rate() and alerts work
	// before the first event of their kind.
	for _, st := range []statemachine.Status{statemachine.StatusSucceeded, statemachine.StatusFailed, statemachine.StatusAborted} {
		m.ended.WithLabelValues(strings.ToLower(string(st)))
		m.endedAsLaunches.WithLabelValues(strings.ToLower(string(st)))
	}
	for _, r := range statemachine.SkipReasons {
		m.skipped.WithLabelValues(string(r))
	}
	for _, k := range statemachine.ReasonKinds {
		if k != statemachine.ReasonPaused {
			m.disabled.WithLabelValues(string(k))
		}
	}
	for _, k := range []task.Kind{task.TickLater, task.StartInvocation, task.PollInvocation, task.NotifyLongRun} {
		for _, c := range []string{"transient", "permanent"} {
			m.failures.WithLabelValues(string(k), c)
		}
	}
	m.reg.MustRegister(m.ended, m.endedAsLaunches, m.lateness, m.skipped, m.repairs, m.disabled, m.failures, m.notified,
		m.objectives.events, m.objectives.budgetSpent,
		troubleCollector{m.troubles}, version.Collector(),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if backlog != nil {
		m.reg.MustRegister(backlogCollector{backlog})
	}
	m.reg.MustRegister(shape...)
	return m
}

// Launched observes an attempt's lateness. An attempt launched early (a
// queue whose clock runs ahead) counts as on time.
func (m *Metrics) Launched(_ string, lateness time.Duration) {
	m.lateness.Observe(max(lateness, 0).Seconds())
}

// Ended counts an invocation that ended. SKIPPED records are counted by
// Skipped, with their reason.
func (m *Metrics) Ended(_ string, status statemachine.Status) {
	if status == statemachine.StatusSkipped {
		return
	}
	s := strings.ToLower(string(status))
	m.ended.WithLabelValues(s).Inc()
	m.endedAsLaunches.WithLabelValues(s).Inc()
}

// Skipped counts occurrences that will not run.
func (m *Metrics) Skipped(_ string, reason statemachine.SkipReason, count int) {
	m.skipped.WithLabelValues(string(reason)).Add(float64(count))
}

// Repaired counts a job the watchdog repaired.
func (m *Metrics) Repaired(string) { m.repairs.Inc() }

// Disabled counts a job that became DISABLED.
func (m *Metrics) Disabled(_ string, reason statemachine.Reason) {
	m.disabled.WithLabelValues(string(reason.Kind)).Inc()
}

// TaskFailed counts a failed delivery of a task.
func (m *Metrics) TaskFailed(_ string, kind task.Kind, permanent bool) {
	class := "transient"
	if permanent {
		class = "permanent"
	}
	m.failures.WithLabelValues(string(kind), class).Inc()
}

// Notified counts a notification's result (notify.Options.Counted).
func (m *Metrics) Notified(result string) { m.notified.WithLabelValues(result).Inc() }

// Handler serves the metrics in the Prometheus exposition format. A
// backlog that cannot be counted leaves that one metric out of the scrape
// instead of failing it.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// backlogCollector reads the task backlog at scrape time: a count kept in
// memory would miss tasks other processes enqueue on the same file.
type backlogCollector struct{ b Backlog }

var backlogDesc = prometheus.NewDesc("sundial_task_backlog",
	"Tasks queued, due or not, held ones included.", nil, nil)

func (c backlogCollector) Describe(ch chan<- *prometheus.Desc) { ch <- backlogDesc }

func (c backlogCollector) Collect(ch chan<- prometheus.Metric) {
	n, err := c.b.CountTasks(context.Background())
	if err != nil {
		ch <- prometheus.NewInvalidMetric(backlogDesc, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(backlogDesc, prometheus.GaugeValue, float64(n))
}
