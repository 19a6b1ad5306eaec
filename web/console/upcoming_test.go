package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/schedule"
	"github.com/sundial-cron/sundial/statemachine"
)

// billingSite is a site whose one project, billing, has a job whose
// context removes fire times for every reason there is: report, at 02:30
// in New York on business days, not on a holiday, skipping the time the
// spring-forward of 2026-03-08 swallows, active from 2026-03-04 to
// 2026-03-13, three runs at most, with jitter.
func billingSite(t *testing.T) *site {
	t.Helper()
	s := newSite(t)
	business, err := schedule.NewCalendar("business-days", nil, []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}, nil)
	if err != nil {
		t.Fatal(err)
	}
	holiday, _ := schedule.ParseDate("2026-03-09")
	holidays, err := schedule.NewCalendar("holidays", nil, nil, []schedule.DateRange{{First: holiday, Last: holiday}})
	if err != nil {
		t.Fatal(err)
	}
	def := engine.Definition{Schedule: "30 2 * * *", TimeZone: "America/New_York", Gap: "skip", Target: "noop", Spec: []byte(`{}`),
		Active:        engine.Window{From: "2026-03-04", Until: "2026-03-13"},
		OnlyCalendars: []*schedule.Calendar{business}, SkipCalendars: []*schedule.Calendar{holidays},
		Policy: statemachine.Policy{MaxRuns: 3, Jitter: 30 * time.Second}}
	if err := s.eng.ApplyProject(s.ctx, "billing", engine.Revision{ID: "billing-1", File: "billing.yaml", Jobs: []engine.Job{{ID: "billing/report", Definition: def}}}); err != nil {
		t.Fatal(err)
	}
	return s
}

const reportPath = "/projects/billing/jobs/report"

// upcomingLines are the lines of a page's list of coming fire times.
func (p page) upcomingLines() []string {
	var out []string
	for _, ol := range p.find("ol", "class", "fires upcoming") {
		for _, li := range findIn(ol, "li") {
			out = append(out, textOf(li))
		}
	}
	return out
}

// upcomingSettings are the settings above a page's coming fire times, by
// name.
func (p page) upcomingSettings() map[string]string {
	out := map[string]string{}
	for _, dl := range p.find("dl", "class", "pairs upcoming-settings") {
		for _, dt := range findIn(dl, "dt") {
			if dd := dt.NextSibling; dd != nil {
				out[textOf(dt)] = textOf(dd)
			}
		}
	}
	return out
}

// The job page lists the job's coming fire times with all that decides
// them, as `sundial schedule next --config` does: each fire time of its
// expression its calendars, DST policy or cap remove, with why, and why
// none follows the last; the settings that decide them above.
func TestJobPageShowsRemovedOccurrencesWithWhy(t *testing.T) {
	t.Parallel()
	s := billingSite(t)
	p := s.get(t, admin, reportPath)
	if p.status != http.StatusOK {
		t.Fatalf("the job page: %d %s", p.status, p.text())
	}
	lines := p.upcomingLines()
	want := []string{
		"removed 2026-03-07 07:30:00 UTC — Sat 2026-03-07 02:30:00 EST not on business-days",
		"removed 2026-03-08 07:00:00 UTC — Sun 2026-03-08 03:00:00 EDT " + schedule.WhyDSTGap,
		"removed 2026-03-09 06:30:00 UTC — Mon 2026-03-09 02:30:00 EDT on holidays",
		"2026-03-10 06:30:00 UTC — Tue 2026-03-10 02:30:00 EDT (jitter",
		"2026-03-11 06:30:00 UTC",
		"2026-03-12 06:30:00 UTC",
		"removed 2026-03-13 06:30:00 UTC — Fri 2026-03-13 02:30:00 EDT " + schedule.WhyRunCap,
	}
	if len(lines) != len(want) {
		t.Fatalf("the job page lists %d lines, want %d:\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d is %q, want it to start %q", i+1, lines[i], w)
		}
	}
	if !strings.Contains(lines[3], "DST: the offset changes before this one, EST (UTC-05:00) to EDT (UTC-04:00)") {
		t.Errorf("the first occurrence after the spring-forward does not call it out: %q", lines[3])
	}
	wants(t, "the job page", p.text(), "no more occurrences after 2026-03-13T02:30:00-04:00: its active window ends 2026-03-13T23:59:59-04:00")
	settings := p.upcomingSettings()
	for name, value := range map[string]string{
		"time zone": "America/New_York", "DST": "gap skip, repeat first", "only on": "business-days (Monday through Friday)",
		"skips": "holidays (1 date from 2026-03-09 to 2026-03-09)", "active": "2026-03-04T00:00:00-05:00 to 2026-03-13T23:59:59.999999999-04:00",
		"max_runs": "3 scheduled runs; 3 left", "jitter": "below 30s",
	} {
		if !strings.Contains(settings[name], value) {
			t.Errorf("the job page says of %s %q, want %q", name, settings[name], value)
		}
	}
}

// The cap on runs counts the runs the job has had: after two, the page
// keeps one occurrence and shows the rest as past the cap.
func TestJobPageCountsTheRunsLeft(t *testing.T) {
	t.Parallel()
	s := billingSite(t)
	s.runUntil(t, time.Date(2026, 3, 11, 7, 0, 0, 0, time.UTC))
	p := s.get(t, admin, reportPath)
	if got := p.upcomingSettings()["max_runs"]; got != "3 scheduled runs; 1 left" {
		t.Errorf("after two runs the page says max_runs %q", got)
	}
	lines := p.upcomingLines()
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "2026-03-12 06:30:00 UTC") || !strings.HasPrefix(lines[1], "removed 2026-03-13 06:30:00 UTC") {
		t.Errorf("after two runs the page lists:\n%s", strings.Join(lines, "\n"))
	}
}

// The playground takes a job's context typed in — days to skip and to
// run only on, an active window, a DST policy, a cap — and lists what
// each removes, with why, as the job page does.
func TestPlaygroundTakesAJobsContext(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	q := url.Values{"expr": {"30 2 * * *"}, "tz": {"America/New_York"}, "dst_gap": {"skip"}, "skip": {"2026-03-09"}, "only": {"mon-fri"},
		"from": {"2026-03-04"}, "until": {"2026-03-13"}, "max_runs": {"3"}}
	p := s.get(t, admin, "/playground?"+q.Encode())
	if p.status != http.StatusOK {
		t.Fatalf("the playground: %d %s", p.status, p.text())
	}
	lines := p.upcomingLines()
	want := []string{
		"removed 2026-03-07 07:30:00 UTC — Sat 2026-03-07 02:30:00 EST not on allowed days",
		"removed 2026-03-08 07:00:00 UTC — Sun 2026-03-08 03:00:00 EDT " + schedule.WhyDSTGap,
		"removed 2026-03-09 06:30:00 UTC — Mon 2026-03-09 02:30:00 EDT on skipped days",
		"2026-03-10 06:30:00 UTC",
		"2026-03-11 06:30:00 UTC",
		"2026-03-12 06:30:00 UTC",
		"removed 2026-03-13 06:30:00 UTC — Fri 2026-03-13 02:30:00 EDT " + schedule.WhyRunCap,
	}
	if len(lines) != len(want) {
		t.Fatalf("the playground lists %d lines, want %d:\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d is %q, want it to start %q", i+1, lines[i], w)
		}
	}
	wants(t, "the playground", p.text(), "only on days of allowed days; not on days of skipped days; active from 2026-03-04 00:00:00 EST until 2026-03-13 23:59:59 EDT",
		"its active window ends 2026-03-13T23:59:59-04:00", "Next fire times, and those removed")

	bad := s.get(t, admin, "/playground?"+url.Values{"expr": {"0 9 * * *"}, "skip": {"christmas"}, "only": {"2026-02-30"}, "from": {"soon"}, "max_runs": {"0"}}.Encode())
	var errs []string
	for _, pre := range bad.find("pre", "class", "error") {
		errs = append(errs, textOf(pre))
	}
	wantErrs := []string{`active window: active.from: "soon" is neither a date`, `days to skip: "christmas": want a weekday`, `days to run only on: "2026-02-30": want`, `max_runs: "0": want a count of at least 1`}
	if bad.status != http.StatusBadRequest || len(errs) != len(wantErrs) {
		t.Fatalf("the playground with a bad context: %d, mistakes %q", bad.status, errs)
	}
	for i, w := range wantErrs {
		if !strings.HasPrefix(errs[i], w) {
			t.Errorf("mistake %d is %q, want it to start %q", i+1, errs[i], w)
		}
	}
}

// A pause from the job page may say until when, in UTC: the job shows
// paused until then, the audit trail records the end as the API's pause
// does, the occurrences before the end show as the pause's, and at the
// end the job resumes by itself. An end typed wrong or
// past is refused and the job runs on.
func TestPauseUntilFromTheJobPage(t *testing.T) {
	t.Parallel()
	s := billingSite(t)
	for _, c := range []struct {
		until  string
		status int
		want   string
	}{
		{"tomorrow", http.StatusBadRequest, `"until" must be a time in UTC`},
		{"2026-03-06T19:00", http.StatusConflict, "which is not after now"},
	} {
		p := s.do(t, admin, "POST", reportPath+"/pause", url.Values{"reason": {"month end"}, "until": {c.until}}, nil)
		if p.status != c.status || !strings.Contains(p.text(), c.want) {
			t.Errorf("pause until %q: %d %q, want %d and %q", c.until, p.status, p.text(), c.status, c.want)
		}
	}
	if v := s.view(t, "billing/report"); v.State.State == statemachine.Paused {
		t.Fatal("a pause with a bad end paused the job")
	}

	p := s.do(t, admin, "POST", reportPath+"/pause", url.Values{"reason": {"month end"}, "until": {"2026-03-10T12:00"}}, nil)
	if p.status != http.StatusSeeOther {
		t.Fatalf("pause until: %d %s", p.status, p.text())
	}
	end := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	v := s.view(t, "billing/report")
	if v.State.State != statemachine.Paused || !v.State.PausedUntil.Equal(end) {
		t.Errorf("after the pause the job is %s until %v, want PAUSED until %v", v.State.State, v.State.PausedUntil, end)
	}
	if len(v.Audit) == 0 || v.Audit[0].Action != engine.ActionPause || !v.Audit[0].Until.Equal(end) || v.Audit[0].Reason != "month end" {
		t.Errorf("the audit trail's newest entry is %+v, want the pause with its end", v.Audit)
	}
	page := s.get(t, admin, reportPath)
	wants(t, "the paused job's page", page.text(), "paused until 2026-03-10 12:00:00 UTC", "resumes by itself", "pause until 2026-03-10 12:00:00 UTC : month end")
	wants(t, "the billing page", s.get(t, admin, "/projects/billing").text(), "until 2026-03-10 12:00:00 UTC")
	// The occurrence before the end is the pause's, and the cap does not
	// count it: the one after the last before is kept.
	lines := page.upcomingLines()
	if len(lines) != 7 || !strings.HasPrefix(lines[3], "removed 2026-03-10 06:30:00 UTC — Tue 2026-03-10 02:30:00 EDT "+schedule.WhyPaused) ||
		!strings.HasPrefix(lines[6], "2026-03-13 06:30:00 UTC") {
		t.Errorf("the paused job's page lists:\n%s", strings.Join(lines, "\n"))
	}

	s.runUntil(t, end.Add(time.Minute))
	v = s.view(t, "billing/report")
	if v.State.State == statemachine.Paused || len(v.Audit) == 0 || v.Audit[0].By != engine.Itself || v.Audit[0].Action != engine.ActionResume {
		t.Errorf("after its end the job is %s, its newest audit entry %+v; want it resumed by %s", v.State.State, v.Audit, engine.Itself)
	}
	if got := s.get(t, admin, reportPath).text(); strings.Contains(got, "resumes by itself") {
		t.Errorf("the resumed job's page still says it resumes by itself: %s", got)
	}
}
