package console_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/sundial-cron/sundial/store"
)

// nightly-report fires at 02:30 in New York, 07:30 UTC before the move
// to daylight time: the range below holds four of its occurrences, from
// before the demo started, none of them run.
const (
	backfillFrom = "2026-03-03T00:00"
	backfillTo   = "2026-03-06T20:00"
)

var backfilled = []string{"20260303T073000Z", "20260304T073000Z", "20260305T073000Z", "20260306T073000Z"}

func backfillForm(from, to string) url.Values { return url.Values{"from": {from}, "to": {to}} }

// backfillDisabled reports whether the page's backfill form is there but
// cannot be sent.
func backfillDisabled(t *testing.T, p page, path string) bool {
	t.Helper()
	forms := p.find("form", "action", path+"/backfill")
	if len(forms) != 1 {
		t.Fatalf("the page has %d backfill forms, want 1: %s", len(forms), p.text())
	}
	buttons := findIn(forms[0], "button")
	return len(buttons) == 1 && slices.ContainsFunc(buttons[0].Attr, func(a html.Attribute) bool { return a.Key == "disabled" })
}

// backfillSection is the text of the page's backfill under way.
func backfillSection(t *testing.T, p page) string {
	t.Helper()
	secs := p.find("section", "class", "backfill")
	if len(secs) != 1 {
		t.Fatalf("the page shows %d backfills under way, want 1: %s", len(secs), p.text())
	}
	return textOf(secs[0])
}

// A triggerer backfills a job from its page: the range is read in UTC,
// the page shows the backfill under way with its range, its next and last
// occurrences and a Cancel button instead of the form; each occurrence
// runs once, and the history and the invocation page mark it backfill.
func TestBackfillFromTheJobPage(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	path := jobPath("nightly-report")
	before := s.get(t, triggerer, path)
	if !slices.Contains(before.actions(), path+"/backfill") {
		t.Fatalf("the triggerer's nightly-report page posts to %q; want the backfill form", before.actions())
	}
	var labels []string
	for _, l := range before.find("label", "", "") {
		labels = append(labels, textOf(l))
	}
	if !slices.Contains(labels, "From, UTC") || !slices.Contains(labels, "To, UTC, not included") {
		t.Errorf("the backfill form's labels are %q; want each to say its time is UTC", labels)
	}

	p := s.do(t, triggerer, "POST", path+"/backfill", backfillForm(backfillFrom, backfillTo), nil)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != path+"?done=backfill" {
		t.Fatalf("the backfill: %d to %q: %s", p.status, p.header.Get("Location"), p.text())
	}
	v := s.view(t, "payments/nightly-report")
	b := v.State.Backfill
	if b == nil || !b.From.Equal(time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)) || !b.To.Equal(time.Date(2026, 3, 6, 20, 0, 0, 0, time.UTC)) {
		t.Fatalf("the job's backfill after the form is %+v; want [%s, %s) UTC", b, backfillFrom, backfillTo)
	}
	if len(v.State.Active) != 1 || v.State.Active[0].ID != backfilled[0] || !v.State.Active[0].Backfill {
		t.Fatalf("the job's active invocations after the form are %+v; want the backfill's first, %s", v.State.Active, backfilled[0])
	}
	under := s.get(t, triggerer, path+"?done=backfill")
	wants(t, "the page of a backfill under way", under.text(), "Done: backfill started")
	wants(t, "the backfill under way", backfillSection(t, under), "Backfill under way",
		"from 2026-03-03 00:00:00 UTC to 2026-03-06 20:00:00 UTC , not included",
		"Next: 2026-03-04 07:30:00 UTC · the last: 2026-03-06 07:30:00 UTC")
	if a := under.actions(); !slices.Contains(a, path+"/cancel-backfill") {
		t.Errorf("the page of a backfill under way posts to %q; want the cancel", a)
	}
	if !backfillDisabled(t, under, path) {
		t.Errorf("the page of a backfill under way lets a second one be asked for: %s", under.text())
	}
	if running := under.find("ul", "class", "active"); len(running) != 1 || !strings.Contains(textOf(running[0]), backfilled[0]+" QUEUED backfill") {
		t.Errorf("Running now does not mark the backfill's invocation: %s", under.text())
	}

	s.runUntil(t, s.clk.Now().Add(time.Hour))
	if b := s.view(t, "payments/nightly-report").State.Backfill; b != nil {
		t.Errorf("the backfill is still under way after its occurrences ran: %+v", b)
	}
	var marked []string
	after := s.get(t, triggerer, path)
	for _, row := range after.find("tr", "", "") {
		if ths := findIn(row, "th"); len(ths) == 1 && strings.Contains(textOf(row), "backfill") {
			marked = append(marked, textOf(ths[0]))
			if tds := findIn(row, "td"); len(tds) < 4 || textOf(tds[3]) != "" {
				t.Errorf("the backfilled %s shows as late: %s", textOf(ths[0]), textOf(row))
			}
		}
	}
	slices.Sort(marked)
	if !slices.Equal(marked, backfilled) {
		t.Errorf("the history marks %q backfill; want %q", marked, backfilled)
	}
	// The strip's cells say "triggered" of a manual run on hover; a
	// backfilled one says backfill.
	tips := 0
	for _, svg := range after.find("svg", "class", "strip") {
		for _, title := range findIn(svg, "title") {
			if strings.Contains(textOf(title), " UTC: SUCCEEDED, backfill, ran ") {
				tips++
			}
		}
	}
	if tips != len(backfilled) {
		t.Errorf("%d of the strip's cells say backfill on hover; want %d", tips, len(backfilled))
	}
	invs, _, err := s.st.Invocations(s.ctx, "payments/nightly-report", store.Page{Limit: store.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string]int{}
	for _, inv := range invs {
		ran[inv.ID]++
		if slices.Contains(backfilled, inv.ID) != inv.Backfill {
			t.Errorf("invocation %s is recorded with backfill %v", inv.ID, inv.Backfill)
		}
	}
	for _, id := range backfilled {
		if ran[id] != 1 {
			t.Errorf("the backfill ran %s %d times, want once", id, ran[id])
		}
	}
	wants(t, "a backfilled invocation's page", s.get(t, reader, invPath("nightly-report", backfilled[1])).text(),
		"SUCCEEDED", "backfill run long after its time, by a backfill")
}

// A range that runs past where the schedule has accounted for the job's
// occurrences is cut there, and the page says so rather than show the
// end asked for as if it were the backfill's.
func TestBackfillPageShowsTheRangeCutAtTheSchedule(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	path := jobPath("nightly-report")
	to := s.clk.Now().Add(48 * time.Hour).UTC().Format("2006-01-02T15:04")
	if p := s.do(t, triggerer, "POST", path+"/backfill", backfillForm(backfillFrom, to), nil); p.status != http.StatusSeeOther {
		t.Fatalf("the backfill: %d: %s", p.status, p.text())
	}
	b := s.view(t, "payments/nightly-report").State.Backfill
	if b == nil {
		t.Fatal("no backfill under way after the form")
	}
	through := b.To.Add(-time.Nanosecond).UTC().Format("2006-01-02 15:04:05 UTC")
	section := backfillSection(t, s.get(t, triggerer, path))
	wants(t, "a cut backfill", section, "through "+through+" , where the schedule took over")
	if strings.Contains(section, "not included") || strings.Contains(section, to[:10]) {
		t.Errorf("the page shows the end asked for, %s, as the backfill's: %s", to, section)
	}
}

// Cancel stops the backfill: it is gone from the page, what it had not
// started never starts, and a second cancel is a conflict with the
// engine's reason.
func TestBackfillCancelFromTheJobPage(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	path := jobPath("nightly-report")
	if p := s.do(t, triggerer, "POST", path+"/backfill", backfillForm(backfillFrom, backfillTo), nil); p.status != http.StatusSeeOther {
		t.Fatalf("the backfill: %d: %s", p.status, p.text())
	}
	p := s.do(t, triggerer, "POST", path+"/cancel-backfill", url.Values{}, nil)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != path+"?done=cancel-backfill" {
		t.Fatalf("the cancel: %d to %q: %s", p.status, p.header.Get("Location"), p.text())
	}
	if b := s.view(t, "payments/nightly-report").State.Backfill; b != nil {
		t.Errorf("the backfill is under way after its cancel: %+v", b)
	}
	page := s.get(t, triggerer, path+"?done=cancel-backfill")
	wants(t, "the page after the cancel", page.text(), "Done: backfill canceled")
	if strings.Contains(page.text(), "Backfill under way") || backfillDisabled(t, page, path) {
		t.Errorf("after the cancel the page shows a backfill under way, or no form to start one: %s", page.text())
	}
	again := s.do(t, triggerer, "POST", path+"/cancel-backfill", url.Values{}, nil)
	if again.status != http.StatusConflict || !strings.Contains(again.text(), "no backfill is under way") {
		t.Errorf("a second cancel: %d %q; want 409 saying no backfill is under way", again.status, again.text())
	}

	s.runUntil(t, s.clk.Now().Add(time.Hour))
	invs, _, err := s.st.Invocations(s.ctx, "payments/nightly-report", store.Page{Limit: store.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	for _, inv := range invs {
		if inv.Backfill {
			ran = append(ran, inv.ID)
		}
	}
	// The first occurrence was queued when the backfill began: it runs to
	// its end; the other three never start.
	if !slices.Equal(ran, backfilled[:1]) {
		t.Errorf("after the cancel the backfill ran %q; want only %q, started before it", ran, backfilled[:1])
	}
}

// What the engine or the form refuses changes nothing and says why, with
// the API's statuses: a bad or empty range, or one reaching back past the
// retention age, 400; a second backfill while one is under way, or one of
// a schedule without fixed occurrences, 409; a reader gets no form and its
// post is refused 403, as is a post from another site.
func TestBackfillRefusalsChangeNothing(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	path := jobPath("nightly-report")
	before := s.view(t, "payments/nightly-report")
	for _, tc := range []struct {
		who      string
		form     url.Values
		header   http.Header
		want     int
		says     string
		describe string
	}{
		{triggerer, backfillForm("", backfillTo), nil, http.StatusBadRequest, `"from" must be a time in UTC`, "no from"},
		{triggerer, backfillForm(backfillFrom, "tomorrow"), nil, http.StatusBadRequest, `not "tomorrow"`, "a to that is no time"},
		{triggerer, backfillForm(backfillTo, backfillFrom), nil, http.StatusBadRequest, "the backfill range is empty", "from after to"},
		{triggerer, backfillForm(backfillFrom, backfillFrom+":00Z"), nil, http.StatusBadRequest, "the backfill range is empty", "from equal to to"},
		{triggerer, backfillForm("2026-01-01T00:00", backfillTo), nil, http.StatusBadRequest, "retention", "past the retention age"},
		{reader, backfillForm(backfillFrom, backfillTo), nil, http.StatusForbidden, "may not trigger", "a reader"},
		{triggerer, backfillForm(backfillFrom, backfillTo), http.Header{"Sec-Fetch-Site": {"cross-site"}}, http.StatusForbidden, "cross-origin request refused", "another site"},
	} {
		p := s.do(t, tc.who, "POST", path+"/backfill", tc.form, tc.header)
		if p.status != tc.want || !strings.Contains(p.text(), tc.says) {
			t.Errorf("%s: %d %q; want %d saying %q", tc.describe, p.status, p.text(), tc.want, tc.says)
		}
	}
	after := s.view(t, "payments/nightly-report")
	if after.State.Backfill != nil || len(after.Audit) != len(before.Audit) {
		t.Errorf("refused backfills changed the job: backfill %+v, %d audit entries, was %d", after.State.Backfill, len(after.Audit), len(before.Audit))
	}
	if a := s.get(t, reader, path).actions(); slices.Contains(a, path+"/backfill") {
		t.Errorf("the reader's page posts to %q; want no backfill form", a)
	}

	if p := s.do(t, triggerer, "POST", path+"/backfill", backfillForm(backfillFrom, backfillTo), nil); p.status != http.StatusSeeOther {
		t.Fatalf("the backfill: %d: %s", p.status, p.text())
	}
	first := s.view(t, "payments/nightly-report").State.Backfill
	p := s.do(t, triggerer, "POST", path+"/backfill", backfillForm("2026-03-05T00:00", backfillTo), nil)
	if p.status != http.StatusConflict || !strings.Contains(p.text(), "under way; cancel it first") {
		t.Errorf("a second backfill: %d %q; want 409 saying one is under way", p.status, p.text())
	}
	if b := s.view(t, "payments/nightly-report").State.Backfill; b == nil || !b.From.Equal(first.From) {
		t.Errorf("a refused second backfill changed the one under way to %+v", b)
	}

	heartbeat := "/projects/demo/jobs/heartbeat"
	if a := s.get(t, admin, heartbeat).actions(); slices.Contains(a, heartbeat+"/backfill") {
		t.Errorf("an @every job's page offers a backfill: %q", a)
	}
	if p := s.do(t, admin, "POST", heartbeat+"/backfill", backfillForm(backfillFrom, backfillTo), nil); p.status != http.StatusConflict || !strings.Contains(p.text(), "no fixed occurrences") {
		t.Errorf("a backfill of an @every job: %d %q; want 409 naming why", p.status, p.text())
	}
}
