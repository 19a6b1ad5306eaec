package web_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/web"
)

// seriesOf counts the scrape's series of one metric.
func seriesOf(s map[string]float64, metric string) int {
	n := 0
	for name := range s {
		if strings.HasPrefix(name, metric+"{") {
			n++
		}
	}
	return n
}

// TestMetricsFollowAFailingJobUntilItRecovers: a job failing in a row has
// its count and the start of its streak; its first success removes both.
func TestMetricsFollowAFailingJobUntilItRecovers(t *testing.T) {
	h := newHarness(t)
	h.define("m/ok", engine.Definition{Schedule: "* * * * *", Target: "noop"})
	h.define("m/fail", engine.Definition{Schedule: "* * * * *", Target: "noop", Spec: []byte(`{"fail": true}`)})
	h.runUntil(t0.Add(3*time.Minute + 30*time.Second))
	s := h.expect(map[string]float64{
		`sundial_job_consecutive_failures{job="m/fail"}`:            3,
		`sundial_job_failing_since_timestamp_seconds{job="m/fail"}`: float64(t0.Add(time.Minute).Unix()),
		`sundial_jobs_failing`:                                      1,
	})
	if n := seriesOf(s, "sundial_job_consecutive_failures"); n != 1 {
		t.Errorf("%d jobs with a failures series; want m/fail alone", n)
	}

	h.define("m/fail", engine.Definition{Schedule: "* * * * *", Target: "noop"})
	h.runUntil(t0.Add(4*time.Minute + 30*time.Second))
	s = h.expect(map[string]float64{`sundial_jobs_failing`: 0})
	for _, metric := range []string{"sundial_job_consecutive_failures", "sundial_job_failing_since_timestamp_seconds"} {
		if n := seriesOf(s, metric); n != 0 {
			t.Errorf("%s: %d series after the job recovered; want none", metric, n)
		}
	}
}

// TestMetricsShowOnlyAttemptsRunningLong: an attempt gets a series once it
// has run DefaultLongRun, and loses it when it ends.
func TestMetricsShowOnlyAttemptsRunningLong(t *testing.T) {
	h := newHarness(t)
	h.define("m/async", engine.Definition{Schedule: "* * * * *", Target: "async"})
	h.runUntil(t0.Add(3 * time.Minute))
	s := h.expect(map[string]float64{`sundial_longest_running_attempt_seconds`: 120})
	if n := seriesOf(s, "sundial_job_running_since_timestamp_seconds"); n != 0 {
		t.Errorf("an attempt 2 minutes old has a series")
	}
	h.runUntil(t0.Add(time.Minute + web.DefaultLongRun))
	h.expect(map[string]float64{
		`sundial_job_running_since_timestamp_seconds{job="m/async"}`: float64(t0.Add(time.Minute).Unix()),
		`sundial_longest_running_attempt_seconds`:                    web.DefaultLongRun.Seconds(),
	})
	if err := h.eng.Abort(h.ctx, "m/async", "", "user:tester@example.com"); err != nil {
		t.Fatal(err)
	}
	s = h.expect(map[string]float64{`sundial_longest_running_attempt_seconds`: 0})
	if n := seriesOf(s, "sundial_job_running_since_timestamp_seconds"); n != 0 {
		t.Errorf("an aborted attempt keeps its series")
	}
}

// TestMetricsConfirmTroubleAgainstTheStore: what this process saw is
// checked against the store at scrape time, so a job another instance has
// seen recover since has no series here.
func TestMetricsConfirmTroubleAgainstTheStore(t *testing.T) {
	h := newHarness(t)
	h.define("m/ok", engine.Definition{Schedule: "* * * * *", Target: "noop"})
	h.runUntil(t0.Add(90 * time.Second))
	h.metrics.Settled("m/ok", statemachine.JobState{State: statemachine.Scheduled, Failures: 4, LastEnded: t0})
	h.metrics.Settled("m/gone", statemachine.JobState{State: statemachine.Scheduled, Failures: 4, LastEnded: t0})
	s := h.scrape()
	if n := seriesOf(s, "sundial_job_consecutive_failures"); n != 0 {
		t.Errorf("%d failures series for jobs the store says are well or gone", n)
	}
	if got := s["sundial_jobs_failing"]; got != 0 {
		t.Errorf("sundial_jobs_failing = %v after the store was read; want 0", got)
	}
}

// TestMetricsBoundThePerJobSeries: with more jobs in trouble than
// MaxTroubledSeries, the worst have series and the total counts them all.
func TestMetricsBoundThePerJobSeries(t *testing.T) {
	m := web.NewMetrics(nil)
	m.Read(web.Sources{Engine: newHarness(t).eng, Now: func() time.Time { return t0 }, Names: true})
	n := web.MaxTroubledSeries + 50
	for i := 1; i <= n; i++ {
		m.Settled(fmt.Sprintf("p/j%03d", i), statemachine.JobState{State: statemachine.Scheduled, Failures: i, LastEnded: t0})
	}
	h := &harness{t: t, handler: m.Handler()}
	s := h.scrape()
	if got := seriesOf(s, "sundial_job_consecutive_failures"); got != web.MaxTroubledSeries {
		t.Errorf("%d failures series; want %d", got, web.MaxTroubledSeries)
	}
	if got := s["sundial_jobs_failing"]; got != float64(n) {
		t.Errorf("sundial_jobs_failing = %v; want %d", got, n)
	}
	worst, kept := fmt.Sprintf(`sundial_job_consecutive_failures{job="p/j%03d"}`, n), `sundial_job_consecutive_failures{job="p/j051"}`
	if s[worst] != float64(n) || s[kept] != 51 {
		t.Errorf("the worst job %v, the least failing one kept %v; want %d and 51", s[worst], s[kept], n)
	}
	if _, ok := s[`sundial_job_consecutive_failures{job="p/j050"}`]; ok {
		t.Errorf("a job outside the worst %d has a series", web.MaxTroubledSeries)
	}
}

// TestMetricsShowARefusedConfig: a project whose newest revision is
// refused is 1 until a revision is applied.
func TestMetricsShowARefusedConfig(t *testing.T) {
	h := newHarness(t)
	rev := engine.Revision{ID: "r1", Jobs: []engine.Job{{ID: "m/a", Definition: engine.Definition{Schedule: "* * * * *", Target: "noop"}}}}
	if err := h.eng.ApplyProject(h.ctx, "m", rev); err != nil {
		t.Fatal(err)
	}
	h.expect(map[string]float64{`sundial_config_refused{project="m"}`: 0})
	if err := h.eng.RecordConfigError(h.ctx, "m", "m.yaml", "m.yaml:3: schedule: bad", t0, nil); err != nil {
		t.Fatal(err)
	}
	h.expect(map[string]float64{`sundial_config_refused{project="m"}`: 1})
	rev.ID = "r2"
	if err := h.eng.ApplyProject(h.ctx, "m", rev); err != nil {
		t.Fatal(err)
	}
	h.expect(map[string]float64{`sundial_config_refused{project="m"}`: 0})
}

// TestMetricsWithoutNamesServeNoJobOrProjectId: /metrics is open, so by
// default it names no job and no project: each per-job metric is the
// worst over every job, unlabelled.
func TestMetricsWithoutNamesServeNoJobOrProjectId(t *testing.T) {
	h := newHarness(t)
	h.metrics.Read(web.Sources{Store: h.st, Engine: h.eng, Now: h.clock})
	rev := engine.Revision{ID: "r1", Jobs: []engine.Job{
		{ID: "secret/fail", Definition: engine.Definition{Schedule: "* * * * *", Target: "noop", Spec: []byte(`{"fail": true}`)}},
		{ID: "secret/fail-less", Definition: engine.Definition{Schedule: "*/2 * * * *", Target: "noop", Spec: []byte(`{"fail": true}`)}},
		{ID: "secret/async", Definition: engine.Definition{Schedule: "* * * * *", Target: "async"}},
	}}
	if err := h.eng.ApplyProject(h.ctx, "secret", rev); err != nil {
		t.Fatal(err)
	}
	if err := h.eng.RecordConfigError(h.ctx, "secret", "secret.yaml", "secret.yaml:1: bad", t0, nil); err != nil {
		t.Fatal(err)
	}
	h.runUntil(t0.Add(time.Minute + web.DefaultLongRun))
	s := h.expect(map[string]float64{
		`sundial_job_consecutive_failures`:            6,
		`sundial_job_failing_since_timestamp_seconds`: float64(t0.Add(time.Minute).Unix()),
		`sundial_job_running_since_timestamp_seconds`: float64(t0.Add(time.Minute).Unix()),
		`sundial_jobs_failing`:                        2,
		`sundial_config_refused`:                      1,
	})
	for name := range s {
		if strings.Contains(name, "secret") {
			t.Errorf("a series names the project: %s", name)
		}
	}
}
