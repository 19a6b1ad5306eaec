package web_test

import (
	"bufio"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/store/sqlite/sqlitetest"
	"github.com/sundial-cron/sundial/web"
)

// scrape reads /metrics and returns each sample by its name and labels, as
// the exposition format writes them.
func (h *harness) scrape() map[string]float64 {
	h.t.Helper()
	a := h.do(req{method: "GET", path: "/metrics"})
	if a.status != http.StatusOK {
		h.t.Fatalf("/metrics: %d %s", a.status, a.raw)
	}
	samples := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(a.raw))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			h.t.Fatalf("sample %q: %v", line, err)
		}
		samples[line[:i]] = v
	}
	return samples
}

// expect scrapes and checks the samples named; it returns the scrape.
func (h *harness) expect(want map[string]float64) map[string]float64 {
	h.t.Helper()
	got := h.scrape()
	for name, w := range want {
		if g, ok := got[name]; !ok || g != w {
			h.t.Errorf("%s = %v (present %v), want %v", name, g, ok, w)
		}
	}
	return got
}

func TestMetricsMoveWithLaunches(t *testing.T) {
	h := newHarness(t)
	// Every series exists from the start, at 0.
	h.expect(map[string]float64{
		`sundial_invocations_ended_total{status="succeeded"}`: 0,
		`sundial_launches_total{result="succeeded"}`:          0,
		`sundial_skipped_occurrences_total{reason="overrun"}`: 0,
		`sundial_launch_lateness_seconds_count`:               0,
		`sundial_watchdog_repairs_total`:                      0,
		`sundial_task_backlog`:                                0,
	})

	h.define("m/ok", engine.Definition{Schedule: "* * * * *", Target: "noop"})
	h.define("m/fail", engine.Definition{Schedule: "* * * * *", Target: "noop", Spec: []byte(`{"fail": true}`)})
	h.define("m/async", engine.Definition{Schedule: "* * * * *", Target: "async"})
	if got := h.scrape()[`sundial_task_backlog`]; got != 3 {
		t.Errorf("backlog after defining 3 jobs: %v, want their 3 ticks", got)
	}
	// The 10:01 ticks and launches run 2 s late; 10:02 and 10:03 on time.
	h.set(t0.Add(time.Minute + 2*time.Second))
	if _, _, _, err := h.disp.RunDue(h.ctx, h.clock()); err != nil {
		t.Fatal(err)
	}
	h.runUntil(t0.Add(3*time.Minute + 30*time.Second))
	if err := h.eng.Abort(h.ctx, "m/async", "", "user:tester@example.com"); err != nil {
		t.Fatal(err)
	}
	h.expect(map[string]float64{
		`sundial_invocations_ended_total{status="succeeded"}`: 3,
		`sundial_invocations_ended_total{status="failed"}`:    3,
		// m/async ran from 10:01 until aborted; 10:02 and 10:03 overran.
		`sundial_invocations_ended_total{status="aborted"}`:   1,
		`sundial_skipped_occurrences_total{reason="overrun"}`: 2,
		`sundial_launch_lateness_seconds_count`:               3 + 2 + 2,
		`sundial_launch_lateness_seconds_bucket{le="0.01"}`:   2 + 2,
		`sundial_launch_lateness_seconds_bucket{le="2.5"}`:    3 + 2 + 2,
		`sundial_watchdog_repairs_total`:                      0,
	})

	// Every tick is lost and nothing runs for a quarter of an hour: the
	// watchdog repairs the three jobs, and what fell due meanwhile is
	// counted as missed.
	if err := sqlitetest.PurgeTasks(h.ctx, h.path); err != nil {
		t.Fatal(err)
	}
	h.set(t0.Add(20 * time.Minute))
	if _, err := h.wd.Pass(h.ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := h.disp.RunDue(h.ctx, h.clock()); err != nil {
		t.Fatal(err)
	}
	n, err := h.st.CountTasks(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	after := h.expect(map[string]float64{
		`sundial_watchdog_repairs_total`: 3,
		`sundial_task_backlog`:           float64(n),
	})
	if got := after[`sundial_skipped_occurrences_total{reason="missed"}`]; got == 0 {
		t.Errorf("no missed occurrence counted after the lost ticks")
	}
	// Only the failing job has per-job series; the healthy ones have none.
	for name := range after {
		if strings.Contains(name, "m/ok") || strings.Contains(name, "m/async") {
			t.Errorf("a per-job series of a job in no trouble: %s", name)
		}
	}
}

// sundial_launches_total, the old name of sundial_invocations_ended_total,
// is served one release more with the same counts, and its HELP says it
// is deprecated and what replaces it.
func TestLaunchesTotalIsADeprecatedCopyOfInvocationsEnded(t *testing.T) {
	m := newHarness(t).metrics
	m.Ended("a/b", statemachine.StatusSucceeded)
	m.Ended("a/b", statemachine.StatusFailed)
	m.Ended("a/c", statemachine.StatusFailed)
	h := &harness{t: t, handler: m.Handler()}
	s := h.scrape()
	for _, st := range []string{"succeeded", "failed", "aborted"} {
		ended, launches := s[`sundial_invocations_ended_total{status="`+st+`"}`], s[`sundial_launches_total{result="`+st+`"}`]
		if ended != launches {
			t.Errorf("%s: sundial_invocations_ended_total %v, sundial_launches_total %v; want the same", st, ended, launches)
		}
	}
	if got := s[`sundial_invocations_ended_total{status="failed"}`]; got != 2 {
		t.Errorf("failed = %v, want 2", got)
	}
	raw := h.do(req{method: "GET", path: "/metrics"}).raw
	if !strings.Contains(raw, "# HELP sundial_launches_total Deprecated, removed in the next release: use sundial_invocations_ended_total") {
		t.Errorf("sundial_launches_total's HELP does not say it is deprecated:\n%s", raw)
	}
}

func TestMetricsCountSkipsByReasonAndCount(t *testing.T) {
	m := newHarness(t).metrics
	m.Skipped("a/b", statemachine.SkipMissed, 5)
	m.Skipped("a/c", statemachine.SkipMissed, 2)
	m.Ended("a/b", statemachine.StatusSkipped)
	m.Launched("a/b", -time.Second)
	h := &harness{t: t, handler: m.Handler()}
	s := h.scrape()
	if got := s[`sundial_skipped_occurrences_total{reason="missed"}`]; got != 7 {
		t.Errorf("missed = %v, want 7", got)
	}
	if got := s[`sundial_invocations_ended_total{status="skipped"}`]; got != 0 {
		t.Errorf("a skipped record counted as an ended invocation")
	}
	if got := s[`sundial_launch_lateness_seconds_bucket{le="0.01"}`]; got != 1 {
		t.Errorf("an early launch is not counted as on time: %v", got)
	}
}

func TestMetricsWithoutABacklogStillServeTheRest(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "closed.db"), sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	st.Close() // counting its tasks now fails
	for name, m := range map[string]*web.Metrics{"failing": web.NewMetrics(st), "none": web.NewMetrics(nil)} {
		h := &harness{t: t, handler: m.Handler()}
		s := h.scrape()
		if _, ok := s[`sundial_invocations_ended_total{status="succeeded"}`]; !ok {
			t.Errorf("%s backlog: the other metrics are gone", name)
		}
		if v, ok := s[`sundial_task_backlog`]; ok {
			t.Errorf("%s backlog: sundial_task_backlog = %v, want it left out", name, v)
		}
	}
}
