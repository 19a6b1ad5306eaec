package web

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// MaxTroubledSeries bounds the per-job series of each kind a scrape
// holds: the jobs in the worst trouble. With 100,000 jobs a series per job
// would be 100,000 series; the jobs in trouble at once are few, and when
// they are not, the unlabelled totals still count them all.
const MaxTroubledSeries = 200

// DefaultLongRun is how long an attempt runs before its job gets a
// running-since series. Alerts on a longer run work on it; shorter runs
// are every healthy job's and would make a series per running job.
const DefaultLongRun = 5 * time.Minute

// Sources are what the metrics read at scrape time.
type Sources struct {
	// Store confirms the jobs this process saw in trouble: another
	// instance may have run them since.
	Store store.Store
	// Engine reads the projects' config status.
	Engine *engine.Engine
	// Now is the clock.
	Now func() time.Time
	// LongRun: DefaultLongRun when 0.
	LongRun time.Duration
	// Names serves the ids of the jobs in trouble and of the projects as
	// labels. /metrics is open to anyone who reaches the listener, and a
	// project a caller may not read must not exist for it: without Names
	// each per-job metric is one unlabelled series, the worst over every
	// job (the alerts in alerts/ work on either).
	Names bool
}

// trouble is what the metrics keep of a job in trouble: failing, or with
// an attempt launched.
type trouble struct {
	failures int
	// failingSince is when the first failure of the streak ended, as far
	// as this process saw it: after a restart, the latest failure's end.
	failingSince time.Time
	// runningSince is when the oldest attempt that is launching or
	// running entered that status; zero for none.
	runningSince time.Time
}

func (t trouble) none() bool { return t.failures == 0 && t.runningSince.IsZero() }

// troubles follows the jobs in trouble, from the states the engine
// commits. A job leaves it when it succeeds, ends its attempts, or is
// paused or disabled (someone decided, or the disable is counted apart).
type troubles struct {
	mu   sync.Mutex
	jobs map[string]trouble
	src  Sources
}

// Settled follows the state the engine committed for a job.
func (m *Metrics) Settled(jobID string, s statemachine.JobState) {
	m.troubles.settle(jobID, s)
}

// Read gives the metrics what they read at scrape time: the jobs in
// trouble are confirmed against the store, and the projects' config status
// is read from it.
func (m *Metrics) Read(src Sources) {
	if src.LongRun <= 0 {
		src.LongRun = DefaultLongRun
	}
	m.troubles.mu.Lock()
	m.troubles.src = src
	m.troubles.mu.Unlock()
}

func (ts *troubles) settle(jobID string, s statemachine.JobState) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t := troubleOf(s, ts.jobs[jobID])
	if t.none() {
		delete(ts.jobs, jobID)
		return
	}
	if ts.jobs == nil {
		ts.jobs = map[string]trouble{}
	}
	ts.jobs[jobID] = t
}

// troubleOf is a job's trouble in state s, given what was known before.
func troubleOf(s statemachine.JobState, before trouble) trouble {
	if s.State == statemachine.Paused || s.State == statemachine.Disabled {
		return trouble{}
	}
	t := trouble{failures: s.Failures}
	if t.failures > 0 {
		t.failingSince = before.failingSince
		if before.failures == 0 || t.failingSince.IsZero() || t.failures < before.failures {
			t.failingSince = s.LastEnded
		}
	}
	for _, a := range s.Active {
		if a.Status != statemachine.StatusLaunching && a.Status != statemachine.StatusRunning {
			continue
		}
		if t.runningSince.IsZero() || a.Since.Before(t.runningSince) {
			t.runningSince = a.Since
		}
	}
	return t
}

var (
	failuresDesc = prometheus.NewDesc("sundial_job_consecutive_failures",
		"Failed invocations in a row of a job that is failing (at most MaxTroubledSeries jobs, the most failures first).", []string{"job"}, nil)
	failingSinceDesc = prometheus.NewDesc("sundial_job_failing_since_timestamp_seconds",
		"When the first failure of a failing job's streak ended, as this process saw it (the same jobs as sundial_job_consecutive_failures).", []string{"job"}, nil)
	runningSinceDesc = prometheus.NewDesc("sundial_job_running_since_timestamp_seconds",
		"When a job's oldest attempt still launching or running was launched, for attempts running longer than the long-run threshold (at most MaxTroubledSeries jobs, the oldest first).", []string{"job"}, nil)
	failingDesc = prometheus.NewDesc("sundial_jobs_failing",
		"Jobs whose last invocation failed, every one, per-job series or not.", nil, nil)
	longestDesc = prometheus.NewDesc("sundial_longest_running_attempt_seconds",
		"How long the oldest attempt still launching or running has run; 0 for none.", nil, nil)
	configRefusedDesc = prometheus.NewDesc("sundial_config_refused",
		"1 while a project's newest config revision is refused (the last good one keeps running), else 0.", []string{"project"}, nil)
)

// troubleCollector serves the jobs in trouble and the projects' config
// status at scrape time.
type troubleCollector struct{ ts *troubles }

// Describe describes nothing: the collector is unchecked, as its series
// have a job label or none depending on Sources.Names.
func (c troubleCollector) Describe(chan<- *prometheus.Desc) {}

// unnamed is a per-job or per-project metric without its label, for a
// scrape without Names.
func unnamed(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(name, help+" Without --metrics-names: the worst over every one, unlabelled.", nil, nil)
}

var (
	failuresUnnamed     = unnamed("sundial_job_consecutive_failures", "Failed invocations in a row of the job failing most.")
	failingSinceUnnamed = unnamed("sundial_job_failing_since_timestamp_seconds", "When the oldest streak of failures began.")
	runningSinceUnnamed = unnamed("sundial_job_running_since_timestamp_seconds", "When the oldest attempt running longer than the long-run threshold was launched.")
	refusedUnnamed      = unnamed("sundial_config_refused", "1 while any project's newest config revision is refused, else 0.")
)

func (c troubleCollector) Collect(ch chan<- prometheus.Metric) {
	ts := c.ts
	ts.mu.Lock()
	src := ts.src
	ts.mu.Unlock()
	if src.Now == nil {
		return // not wired to a store: nothing to confirm against
	}
	ctx := context.Background()
	now := src.Now()
	failing, running := ts.worst(ctx, src, now)
	ts.mu.Lock()
	nFailing, oldest := 0, time.Time{}
	for _, t := range ts.jobs {
		if t.failures > 0 {
			nFailing++
		}
		if !t.runningSince.IsZero() && (oldest.IsZero() || t.runningSince.Before(oldest)) {
			oldest = t.runningSince
		}
	}
	ts.mu.Unlock()
	if src.Names {
		for _, j := range failing {
			ch <- prometheus.MustNewConstMetric(failuresDesc, prometheus.GaugeValue, float64(j.failures), j.id)
			ch <- prometheus.MustNewConstMetric(failingSinceDesc, prometheus.GaugeValue, unixSeconds(j.failingSince), j.id)
		}
		for _, j := range running {
			ch <- prometheus.MustNewConstMetric(runningSinceDesc, prometheus.GaugeValue, unixSeconds(j.runningSince), j.id)
		}
	} else {
		if len(failing) > 0 {
			// failing is sorted by failures, most first.
			since := failing[0].failingSince
			for _, j := range failing {
				if j.failingSince.Before(since) {
					since = j.failingSince
				}
			}
			ch <- prometheus.MustNewConstMetric(failuresUnnamed, prometheus.GaugeValue, float64(failing[0].failures))
			ch <- prometheus.MustNewConstMetric(failingSinceUnnamed, prometheus.GaugeValue, unixSeconds(since))
		}
		if len(running) > 0 {
			ch <- prometheus.MustNewConstMetric(runningSinceUnnamed, prometheus.GaugeValue, unixSeconds(running[0].runningSince))
		}
	}
	ch <- prometheus.MustNewConstMetric(failingDesc, prometheus.GaugeValue, float64(nFailing))
	longest := 0.0
	if !oldest.IsZero() {
		longest = max(now.Sub(oldest), 0).Seconds()
	}
	ch <- prometheus.MustNewConstMetric(longestDesc, prometheus.GaugeValue, longest)

	projects, err := src.Engine.Projects(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(configRefusedDesc, err)
		return
	}
	anyRefused := 0.0
	for id, p := range projects {
		refused := 0.0
		if p.Error != "" {
			refused, anyRefused = 1, 1
		}
		if src.Names {
			ch <- prometheus.MustNewConstMetric(configRefusedDesc, prometheus.GaugeValue, refused, id)
		}
	}
	if !src.Names {
		ch <- prometheus.MustNewConstMetric(refusedUnnamed, prometheus.GaugeValue, anyRefused)
	}
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

type troubledJob struct {
	id string
	trouble
}

// worst returns the jobs to give series, the failing ones and the long
// running ones, each at most MaxTroubledSeries, worst first. Each is
// confirmed against the store first: in the cloud shape another instance
// may have run the job since this one saw it fail, and a series this
// instance alone holds would keep an alert firing for a job that is well.
func (ts *troubles) worst(ctx context.Context, src Sources, now time.Time) (failing, running []troubledJob) {
	pick := func(keep func(trouble) bool, worse func(a, b troubledJob) int) []troubledJob {
		ts.mu.Lock()
		var all []troubledJob
		for id, t := range ts.jobs {
			if keep(t) {
				all = append(all, troubledJob{id, t})
			}
		}
		ts.mu.Unlock()
		slices.SortFunc(all, func(a, b troubledJob) int { return cmp.Or(worse(a, b), cmp.Compare(a.id, b.id)) })
		var out []troubledJob
		for _, j := range all {
			if len(out) == MaxTroubledSeries {
				break
			}
			t, ok := ts.confirm(ctx, src.Store, j.id)
			if ok && keep(t) {
				out = append(out, troubledJob{j.id, t})
			}
		}
		return out
	}
	failing = pick(func(t trouble) bool { return t.failures > 0 },
		func(a, b troubledJob) int { return cmp.Compare(b.failures, a.failures) })
	running = pick(func(t trouble) bool { return !t.runningSince.IsZero() && now.Sub(t.runningSince) >= src.LongRun },
		func(a, b troubledJob) int { return a.runningSince.Compare(b.runningSince) })
	return failing, running
}

// confirm reads the job's state from the store and follows it; false if
// the job is no longer in trouble. A job that cannot be read is kept as it
// was: a store failing now is not a reason to hide trouble.
func (ts *troubles) confirm(ctx context.Context, st store.Store, jobID string) (trouble, bool) {
	ts.mu.Lock()
	before, ok := ts.jobs[jobID]
	ts.mu.Unlock()
	if !ok {
		return trouble{}, false
	}
	if st == nil {
		return before, true
	}
	job, err := st.Job(ctx, jobID)
	if errors.Is(err, store.ErrNotFound) {
		ts.mu.Lock()
		delete(ts.jobs, jobID)
		ts.mu.Unlock()
		return trouble{}, false
	}
	if err != nil {
		return before, true
	}
	v, err := engine.Decode(job)
	if err != nil {
		return before, true
	}
	ts.settle(jobID, v.State)
	t := troubleOf(v.State, before)
	return t, !t.none()
}
