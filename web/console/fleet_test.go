package console_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/store"
)

// rowsOf lists the text of each row header of the fleet section with id.
func (p page) rowsOf(t *testing.T, id string) []string {
	t.Helper()
	var out []string
	for _, sec := range p.find("section", "aria-labelledby", id) {
		for _, th := range findIn(sec, "th") {
			if attr(th, "scope") == "row" {
				out = append(out, textOf(th))
			}
		}
	}
	return out
}

// The fleet lists, across the projects the viewer reads, the jobs that
// failed in the last 24 hours, newest failure first, each linked to its
// newest failure, and the invocations running now, each linked; a viewer
// sees only what it may read, and a project it may not read does not
// exist for it.
func TestFleetShowsWhatRunsAndWhatFailed(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	if _, err := s.eng.Trigger(s.ctx, "payments/watch-deploys", owner); err != nil {
		t.Fatal(err)
	}
	s.runUntil(t, s.now().Add(time.Minute))

	p := s.get(t, admin, "/fleet")
	if p.status != http.StatusOK {
		t.Fatalf("/fleet: %d %s", p.status, p.text())
	}
	if got, want := p.rowsOf(t, "failed"), []string{"demo/always-fails", "payments/settle"}; !slices.Equal(got, want) {
		t.Errorf("failed in the last 24 hours: %v, want %v (the newest failure first)", got, want)
	}
	for _, jobID := range []string{"demo/always-fails", "payments/settle"} {
		var newest *store.InvocationRecord
		invs, _, err := s.st.Invocations(s.ctx, jobID, store.Page{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, inv := range invs {
			if inv.Status == "FAILED" {
				newest = inv
				break
			}
		}
		if newest == nil || len(p.find("a", "href", "/projects/"+strings.Replace(jobID, "/", "/jobs/", 1)+"/invocations/"+newest.ID)) != 1 {
			t.Errorf("the fleet does not link %s's newest failure %v", jobID, newest)
		}
	}
	if got, want := p.rowsOf(t, "running"), []string{"payments/watch-deploys"}; !slices.Equal(got, want) {
		t.Errorf("running now: %v, want %v", got, want)
	}
	if len(p.find("a", "href", invPath("watch-deploys", "manual-1"))) != 1 {
		t.Errorf("the fleet does not link the running invocation manual-1: %s", p.text())
	}
	if !strings.Contains(p.text(), "1 running now") || !strings.Contains(p.text(), "2 jobs failed in the last 24 hours") {
		t.Errorf("the fleet's summary: %s", p.text())
	}

	// The narrow reader of nightly-report: payments with that job alone,
	// which neither fails nor runs.
	narrowPage := s.get(t, narrow, "/fleet")
	if got := narrowPage.rowsOf(t, "failed"); len(got) != 0 {
		t.Errorf("the narrow reader's fleet lists failures %v", got)
	}
	if got := narrowPage.rowsOf(t, "by-project"); !slices.Equal(got, []string{"payments"}) {
		t.Errorf("the narrow reader's fleet lists the projects %v, want [payments]", got)
	}
	for _, hidden := range []string{"settle", "watch-deploys", "always-fails", "search", "demo"} {
		if strings.Contains(narrowPage.raw, hidden) {
			t.Errorf("the narrow reader's fleet names %s", hidden)
		}
	}
	if got := s.get(t, reader, "/fleet").rowsOf(t, "failed"); !slices.Equal(got, []string{"payments/settle"}) {
		t.Errorf("the reader of payments sees failures %v, want payments/settle alone", got)
	}
	if out := s.get(t, outsider, "/fleet"); strings.Contains(out.raw, "payments") || !strings.Contains(out.text(), "0 jobs you may read") {
		t.Errorf("the outsider's fleet: %s", out.text())
	}

	// Narrowed to a project, and refused one the viewer does not see as
	// one that does not exist.
	if got := s.get(t, admin, "/fleet?project=payments").rowsOf(t, "failed"); !slices.Equal(got, []string{"payments/settle"}) {
		t.Errorf("the fleet of payments lists failures %v", got)
	}
	hidden, missing := s.get(t, narrow, "/fleet?project=search"), s.get(t, narrow, "/fleet?project=nope")
	if hidden.status != http.StatusNotFound || strings.ReplaceAll(hidden.text(), "search", "nope") != missing.text() {
		t.Errorf("a project the viewer does not see: %d %q; one that does not exist: %q", hidden.status, hidden.text(), missing.text())
	}
	if p := s.get(t, "", "/fleet"); strings.Contains(p.raw, "payments") || len(p.find("a", "href", "/auth/signin?next=%2Ffleet")) == 0 {
		t.Errorf("signed out, the fleet shows a project or no sign-in: %s", p.text())
	}
	if p := s.get(t, admin, "/fleet?projects=x"); p.status != http.StatusBadRequest {
		t.Errorf("an unknown query parameter: %d, want 400", p.status)
	}
}
