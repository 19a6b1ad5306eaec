package console_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/engine"
)

// reimport applies two revisions of a project "nightly": the second moves
// 5 jobs from a hashed minute onto 02:00:00, beside 100 there already,
// moves index half an hour, adds refresh (every 15 minutes, so at 02:00:00
// too: a herd of 106) and drops crawl.
func (s *site) reimport(t testing.TB) {
	t.Helper()
	apply := func(rev string, jobs map[string]string) {
		r := engine.Revision{ID: rev, File: "nightly.yaml"}
		for name, sched := range jobs {
			r.Jobs = append(r.Jobs, engine.Job{ID: "nightly/" + name, Definition: engine.Definition{Schedule: sched, Target: "noop"}})
		}
		if err := s.eng.ApplyProject(s.ctx, "nightly", r); err != nil {
			t.Fatal(err)
		}
	}
	r1 := map[string]string{"index": "0 4 * * *", "crawl": "H * * * *"}
	r2 := map[string]string{"index": "30 4 * * *", "refresh": "*/15 * * * *"}
	for i := range 100 {
		r1[fmt.Sprintf("settled-%03d", i)], r2[fmt.Sprintf("settled-%03d", i)] = "0 2 * * *", "0 2 * * *"
	}
	for i := range 5 {
		r1[fmt.Sprintf("report-%02d", i)], r2[fmt.Sprintf("report-%02d", i)] = "H 2 * * *", "0 2 * * *"
	}
	apply("nightly-1", r1)
	apply("nightly-2", r2)
}

// The configs page links to what a project's last import does to its
// schedules, which says what sundial diff would have said of it: each
// job's change and the fire times that move, and the herd the import made
// at 02:00:00 with the H that spreads its jobs.
func TestTheLastImportsChangesToTheSchedules(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	s.reimport(t)
	if len(s.get(t, admin, "/configs").find("a", "href", "/configs/nightly/changes")) != 1 {
		t.Fatal("the configs page does not link to what nightly's last import does")
	}
	p := s.get(t, admin, "/configs/nightly/changes")
	if p.status != http.StatusOK {
		t.Fatalf("/configs/nightly/changes: %d\n%s", p.status, p.text())
	}
	text := p.text()
	wants(t, "nightly's changes", text, "1 second past 100 launches", "2026-03-08 02:00:00 UTC 100 106", "nightly/refresh: */15 * * * * → H */15 * * * *",
		"nightly/report-00: 0 2 * * * → H 2 * * *", "and 1 more",
		"index changed schedule : 0 4 * * * → 30 4 * * *", "7 gone: Mar 8 04:00, Mar 9 04:00",
		"crawl removed", "refresh added", "Jobs it changed 8")
	if strings.Contains(text, "settled-") {
		t.Errorf("the page lists jobs the import left as they were: %q", text)
	}

	narrowed := s.get(t, narrow, "/configs/payments/changes").text()
	if !strings.Contains(narrowed, "nightly-report added") || strings.Contains(narrowed, "settle") {
		t.Errorf("the narrow reader's payments changes: %q; want nightly-report's alone", narrowed)
	}
	if p := s.get(t, narrow, "/configs/nightly/changes"); p.status != http.StatusNotFound {
		t.Errorf("the narrow reader's changes of nightly: %d, want 404", p.status)
	}
}

// An import that changed more jobs than the project's record lists (50)
// says that the others are counted as they are now.
func TestTheLastImportsChangesPastTheRecordsListSayTheyArePartial(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	for i, sched := range []string{"0 3 * * *", "0 4 * * *"} {
		r := engine.Revision{ID: fmt.Sprintf("r%d", i), File: "many.yaml"}
		for j := range engine.MaxChanges + 10 {
			r.Jobs = append(r.Jobs, engine.Job{ID: fmt.Sprintf("many/j%02d", j), Definition: engine.Definition{Schedule: sched, Target: "noop"}})
		}
		if err := s.eng.ApplyProject(s.ctx, "many", r); err != nil {
			t.Fatal(err)
		}
	}
	text := s.get(t, admin, "/configs/many/changes").text()
	wants(t, "many's changes", text, "Jobs it changed 50", "the first 50 of each kind", "j49 changed", "Launches over the next day 60 before, 60 now")
	if strings.Contains(text, "j50") {
		t.Errorf("a job past the record's list shows as changed: %q", text)
	}
}
