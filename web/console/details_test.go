package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/sundial-cron/sundial/engine"
	"github.com/sundial-cron/sundial/statemachine"
	"github.com/sundial-cron/sundial/store"
)

// pairs maps each <dt> of a page's definition lists to the text of the
// <dd> after it.
func (p page) pairs() map[string]string {
	out := map[string]string{}
	for _, dt := range p.find("dt", "", "") {
		for n := dt.NextSibling; n != nil; n = n.NextSibling {
			if n.Data == "dd" {
				out[textOf(dt)] = textOf(n)
				break
			}
		}
	}
	return out
}

// historyCells is the row of an invocation in a job page's history: its
// cells' text by column.
func (p page) historyCells(t *testing.T, id string) map[string]string {
	t.Helper()
	var heads []string
	for _, table := range p.find("table", "class", "history") {
		for _, th := range findIn(table, "th") {
			if attr(th, "scope") == "col" {
				heads = append(heads, textOf(th))
			}
		}
		for _, tr := range findIn(table, "tr") {
			var cells []*html.Node
			for c := tr.FirstChild; c != nil; c = c.NextSibling {
				if c.Data == "th" || c.Data == "td" {
					cells = append(cells, c)
				}
			}
			if len(cells) != len(heads) || textOf(cells[0]) != id {
				continue
			}
			out := map[string]string{}
			for i, c := range cells {
				out[heads[i]] = textOf(c)
			}
			return out
		}
	}
	t.Fatalf("no history row of %s", id)
	return nil
}

// An invocation retried after backoff launched on time: its lateness
// counts to its first attempt's launch, not to the retry's (the page
// said "lateness 30.0 s" of a job launched on time).
func TestLatenessCountsFromTheFirstAttemptsLaunch(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	inv := s.newest(t, "demo/always-fails")
	if inv.Attempt < 2 || inv.Started.Sub(inv.Occurrence) < 10*time.Second {
		t.Fatalf("the newest invocation of always-fails is attempt %d launched %s after its time; want a retry after backoff", inv.Attempt, inv.Started.Sub(inv.Occurrence))
	}
	path := "/projects/demo/jobs/always-fails/invocations/" + url.PathEscape(inv.ID)
	got := s.get(t, admin, path).pairs()
	if !strings.HasPrefix(got["Lateness"], "0 ms") {
		t.Errorf("the invocation's lateness is %q, want 0 ms (its first attempt launched at its time)", got["Lateness"])
	}
	if got["First attempt launched"] != inv.Occurrence.UTC().Format("2006-01-02 15:04:05 UTC") {
		t.Errorf("its first attempt launched %q, want at its time %s", got["First attempt launched"], inv.Occurrence.UTC())
	}
	if want := inv.Started.UTC().Format("2006-01-02 15:04:05 UTC"); got["Launched (attempt 3)"] != want {
		t.Errorf("its last attempt launched %q, want %s: %v", got["Launched (attempt 3)"], want, got)
	}
	if late := s.get(t, admin, "/projects/demo/jobs/always-fails").historyCells(t, inv.ID)["Late"]; late != "0 ms" {
		t.Errorf("the history says it was %q late, want 0 ms", late)
	}
}

// A log shows each line with its time and its stream: Sundial's own
// lines with the time they carry, the target's output after the attempt
// that returned it.
func TestLogLinesShowTheirTimeAndStream(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	inv := s.newest(t, "payments/settle")
	p := s.get(t, admin, invPath("settle", inv.ID))
	var rows [][]string
	for _, table := range p.find("table", "class", "log") {
		for _, tr := range findIn(table, "tr")[1:] {
			var cells []string
			for _, td := range findIn(tr, "td") {
				cells = append(cells, textOf(td))
			}
			rows = append(rows, cells)
		}
	}
	if len(rows) < 4 {
		t.Fatalf("the log's rows: %q; want its lines", rows)
	}
	utc := func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }
	for i, w := range []struct{ time, stream, line string }{
		{utc(inv.Created), "sundial", "attempt 1 QUEUED"},
		{utc(inv.Started), "sundial", "attempt 1 LAUNCHING"},
		{utc(inv.Ended), "sundial", "attempt 1 " + inv.Status},
		{"—", "output, attempt 1", "POST https://bank.example/settle"},
	} {
		if r := rows[i]; r[0] != w.time || r[1] != w.stream || !strings.HasPrefix(r[2], w.line) {
			t.Errorf("log row %d is %q, want %q", i+1, r, w)
		}
	}
}

// A revision that is a file's content hash is shortened as a commit is,
// and shown whole on hover.
func TestContentHashRevisionsAreShortened(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	const hash = "3b8e5c0e2d6a4f4b9d7f0c1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e"
	if err := s.eng.ApplyProject(s.ctx, "files", engine.Revision{ID: hash, File: "files.yaml", Jobs: []engine.Job{{ID: "files/tidy",
		Definition: engine.Definition{Schedule: "@daily", Target: "noop", Spec: []byte(`{}`)}}}}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/", "/configs", "/projects/files", "/projects/files/jobs/tidy"} {
		p := s.get(t, admin, path)
		if strings.Contains(p.text(), hash) || !strings.Contains(p.text(), hash[:12]) || len(p.find("code", "title", hash)) == 0 {
			t.Errorf("%s: the revision is not %s, whole on hover: %s", path, hash[:12], p.text())
		}
	}
}

// The configs page of a project whose config is gone says so, rather
// than "none running" beside "the newest revision runs".
func TestConfigsPageSaysARemovedProjectIsGone(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	if err := s.eng.ApplyProject(s.ctx, "demo", engine.Revision{}); err != nil {
		t.Fatal(err)
	}
	p := s.get(t, admin, "/configs")
	var demo string
	for _, sec := range p.find("section", "id", "demo") {
		demo = textOf(sec)
	}
	if !strings.Contains(demo, "Its config is gone from the source") || !strings.Contains(demo, "removed from config") ||
		strings.Contains(demo, "The newest revision runs") || strings.Contains(demo, "none running") {
		t.Errorf("the configs page says of the removed demo: %q", demo)
	}
	if payments := s.get(t, admin, "/configs").text(); !strings.Contains(payments, "The newest revision runs") {
		t.Errorf("the configs page no longer says payments' newest revision runs: %s", payments)
	}
}

// The playground says every mistake at once: a wrong zone, wrong DST
// options and a wrong expression, each named.
func TestPlaygroundShowsEveryMistake(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	p := s.get(t, admin, "/playground?expr=61+*+*+*+*&tz=Mars%2FOlympus&dst_gap=maybe&dst_repeat=twice")
	if p.status != http.StatusBadRequest {
		t.Errorf("the playground with mistakes: %d, want 400", p.status)
	}
	var errs []string
	for _, pre := range p.find("pre", "class", "error") {
		errs = append(errs, textOf(pre))
	}
	if len(errs) != 4 {
		t.Fatalf("the playground lists %d mistakes, want 4: %q", len(errs), errs)
	}
	for i, want := range []string{"time zone:", "DST gap:", "DST repeat:", "schedule:"} {
		if !strings.HasPrefix(errs[i], want) {
			t.Errorf("mistake %d is %q, want it to start %q", i+1, errs[i], want)
		}
	}
	if !strings.Contains(p.text(), "4 mistakes") {
		t.Errorf("the playground does not count the mistakes: %s", p.text())
	}
}

// A skipped occurrence's reason is explained where it shows: in the
// history, on the invocation's page, in its strip cell's words; superseded (a
// catch-up ran a later occurrence in its place) and paused among them.
func TestSkipReasonsAreExplainedWhereTheyShow(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	if err := s.eng.ApplyProject(s.ctx, "late", engine.Revision{ID: "late-1", File: "late.yaml", Jobs: []engine.Job{{ID: "late/minutely",
		Definition: engine.Definition{Schedule: "* * * * *", Target: "noop", Spec: []byte(`{}`), Policy: statemachine.Policy{CatchupWindow: time.Hour}}}}}); err != nil {
		t.Fatal(err)
	}
	s.runUntil(t, s.now().Add(2*time.Minute))
	// The server sleeps ten minutes: its tick comes late, and catch-up
	// runs only the latest of the occurrences due.
	s.clk.Advance(10 * time.Minute)
	s.runUntil(t, s.now().Add(time.Minute))
	invs, _, err := s.st.Invocations(s.ctx, "late/minutely", store.Page{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	var superseded *store.InvocationRecord
	for _, inv := range invs {
		if inv.Reason == "superseded" {
			superseded = inv
		}
	}
	if superseded == nil {
		t.Fatalf("no occurrence of late/minutely was superseded: %d invocations", len(invs))
	}
	const means = "catch-up ran only the latest of them in its place"
	if row := s.get(t, admin, "/projects/late/jobs/minutely").historyCells(t, superseded.ID); !strings.Contains(row["Status"], "superseded "+"it was found due late") || !strings.Contains(row["Status"], means) {
		t.Errorf("the history says of a superseded occurrence %q", row["Status"])
	}
	if got := s.get(t, admin, "/projects/late/jobs/minutely/invocations/"+url.PathEscape(superseded.ID)).pairs()["Status"]; !strings.Contains(got, means) {
		t.Errorf("the superseded invocation's page says %q", got)
	}
	found := false
	for _, a := range s.get(t, admin, "/projects/late/jobs/minutely").find("a", "href", "/projects/late/jobs/minutely/invocations/"+url.PathEscape(superseded.ID)) {
		if inside(a, "svg") {
			found = found || strings.HasSuffix(textOf(a), " S") && strings.Contains(textOf(a), means)
		}
	}
	if !found {
		t.Error("the strip's cell of the superseded occurrence is not marked S with its reason explained")
	}
	// Resumed, reconcile records the occurrences that fell while it was
	// paused.
	if err := s.eng.Resume(s.ctx, "payments/reconcile", owner); err != nil {
		t.Fatal(err)
	}
	s.runUntil(t, s.now().Add(time.Minute))
	var paused *store.InvocationRecord
	reconcile, _, err := s.st.Invocations(s.ctx, "payments/reconcile", store.Page{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, inv := range reconcile {
		if inv.Reason == "paused" {
			paused = inv
		}
	}
	if paused == nil {
		t.Fatal("the paused reconcile recorded no occurrence as skipped")
	}
	if row := s.get(t, admin, jobPath("reconcile")).historyCells(t, paused.ID); !strings.Contains(row["Status"], "it fell while the job was paused") {
		t.Errorf("the history says of a paused occurrence %q", row["Status"])
	}
}

// The duration chart has a scale of round, distinct durations rising to
// its top, and the median drawn across, so a trend can be read against
// them; the timeline and the chart are drawn 1,200 units wide.
func TestDurationChartHasAScaleAndAMedian(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	p := s.get(t, admin, jobPath("settle"))
	charts := p.find("svg", "class", "durations")
	if len(charts) != 1 || attr(charts[0], "viewBox") != "0 0 1200 240" || len(p.find("svg", "class", "timeline")) != 1 ||
		!strings.HasPrefix(attr(p.find("svg", "class", "timeline")[0], "viewBox"), "0 0 1200 ") {
		t.Fatalf("the job page's charts: %d duration charts, viewBox %q", len(charts), attr(charts[0], "viewBox"))
	}
	var scale []string
	median := ""
	for _, text := range findIn(charts[0], "text") {
		switch attr(text, "class") {
		case "tick":
			if a := attr(text, "text-anchor"); a == "end" && !strings.Contains(textOf(text), "UTC") {
				scale = append(scale, textOf(text))
			}
		case "median":
			median = textOf(text)
		}
	}
	// settle runs 20 s to 3 min: a line a minute, from 0.
	if want := []string{"1 min", "2 min", "3 min", "0"}; strings.Join(scale, ",") != strings.Join(want, ",") {
		t.Errorf("the duration chart's scale is %q, want %q", scale, want)
	}
	if !strings.HasPrefix(median, "median ") {
		t.Errorf("the duration chart's median is %q", median)
	}
}
