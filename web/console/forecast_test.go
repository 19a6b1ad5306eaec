package console_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
)

// herd adds a project whose 60 jobs all run at 02:00 UTC, and 20 that
// each run at a minute of the hour hashed from their id.
func (s *site) herd(t testing.TB) {
	t.Helper()
	r := engine.Revision{ID: "reports-1", File: "reports.yaml"}
	for i := range 60 {
		r.Jobs = append(r.Jobs, engine.Job{ID: fmt.Sprintf("reports/daily-%02d", i), Definition: engine.Definition{Schedule: "0 2 * * *", Target: "noop"}})
	}
	for i := range 20 {
		r.Jobs = append(r.Jobs, engine.Job{ID: fmt.Sprintf("reports/hourly-%02d", i), Definition: engine.Definition{Schedule: "H * * * *", Target: "noop"}})
	}
	if err := s.eng.ApplyProject(s.ctx, "reports", r); err != nil {
		t.Fatal(err)
	}
}

// number is the whole number that follows label in text.
func number(t *testing.T, text, pattern string) int {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no %q in %q", pattern, text)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// The forecast names the busiest minute of the next day, the herd of 60
// jobs at 02:00 UTC; the server's launches are its projects' summed; the
// paused job is left out; and a viewer sees the forecast of the jobs it
// may read alone.
func TestTheForecastNamesTheHerdBeforeItComes(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	s.herd(t)
	p := s.get(t, admin, "/forecast")
	if p.status != http.StatusOK {
		t.Fatalf("/forecast: %d\n%s", p.status, p.text())
	}
	text := p.text()
	wants(t, "the forecast", text, "the busiest minute 02:00 UTC", "Left out: 1 paused job")
	if peak := number(t, text, `the busiest minute 02:00 UTC with (\d+)`); peak < 60 {
		t.Errorf("the busiest minute has %d launches; want at least the herd's 60", peak)
	}
	total := number(t, text, `: (\d+) launches`)
	sum := 0
	for _, row := range p.find("table", "class", "forecast-projects") {
		cells := regexp.MustCompile(`(\w+) (\d+) (\d+) `).FindAllStringSubmatch(textOf(row), -1)
		for _, c := range cells {
			n, _ := strconv.Atoi(c[3])
			sum += n
		}
	}
	if sum != total {
		t.Errorf("the projects' launches sum to %d, the server's are %d", sum, total)
	}
	if !strings.Contains(text, "reports 80 ") {
		t.Errorf("the forecast's reports row does not count its 80 jobs: %q", text)
	}
	if len(p.find("svg", "class", "forecast")) != 1 || len(p.find("svg", "class", "spark")) != 4 {
		t.Errorf("want the server's chart and a small one per project (4)")
	}

	one := s.get(t, admin, "/forecast?project=reports").text()
	if !strings.Contains(one, "80 jobs you may read in reports") || number(t, one, `the busiest minute 02:00 UTC with (\d+)`) < 60 {
		t.Errorf("reports' forecast: %q; want its 80 jobs, the busiest minute 02:00 UTC", one)
	}
	narrowed := s.get(t, narrow, "/forecast").text()
	if !strings.Contains(narrowed, "of 1 job you may read") || strings.Contains(narrowed, "reports") || strings.Contains(narrowed, "search") {
		t.Errorf("the narrow reader's forecast: %q; want payments' nightly-report alone", narrowed)
	}
	if p := s.get(t, narrow, "/forecast?project=reports"); p.status != http.StatusNotFound {
		t.Errorf("the narrow reader's forecast of reports: %d, want 404", p.status)
	}
	if p := s.get(t, admin, "/forecast?zone=x"); p.status != http.StatusBadRequest {
		t.Errorf("/forecast?zone=x: %d, want 400", p.status)
	}
}

// The console counts a jittered job's launches at their occurrences, so
// that jobs alike are counted once whatever their jitters: 60 jobs at
// 01:59:30 UTC with up to 50 s of jitter are 60 launches in the minute
// 01:59, where most of them launch in 02:00.
func TestTheForecastCountsJitteredLaunchesAtTheirOccurrences(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	r := engine.Revision{ID: "reports-1", File: "reports.yaml"}
	for i := range 60 {
		r.Jobs = append(r.Jobs, engine.Job{ID: fmt.Sprintf("reports/daily-%02d", i), Definition: engine.Definition{
			Schedule: "30 59 1 * * *", Target: "noop", Policy: statemachine.Policy{Jitter: 50 * time.Second}}})
	}
	if err := s.eng.ApplyProject(s.ctx, "reports", r); err != nil {
		t.Fatal(err)
	}
	text := s.get(t, admin, "/forecast?project=reports").text()
	if n := number(t, text, `the busiest minute 01:59 UTC with (\d+)`); n != 60 {
		t.Errorf("the minute 01:59 has %d launches, want the 60 occurrences", n)
	}
}
