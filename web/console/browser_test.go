package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/sundial-cron/sundial/internal/browsertest"
)

// browser is a headless chromium tab signed in as who, over the site.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string
	// shots is where screenshots go: the test's artifact directory, and
	// SUNDIAL_CONSOLE_SCREENSHOTS too when set (docs/console).
	shots []string
}

func newBrowser(t *testing.T, s *site, who string) *browser {
	t.Helper()
	return browse(t, s.handler, who)
}

// browse is a headless chromium tab over h, signed in as who by the
// tests' header; "" for none, as a browser that signs in by itself.
func browse(t *testing.T, h http.Handler, who string) *browser {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ctx := browsertest.Tab(t, 3*time.Minute,
		chromedp.Flag("hide-scrollbars", true),
		// The viewer is in Paris: the pages' UTC times show in its zone.
		chromedp.Env("TZ=Europe/Paris"),
		chromedp.WindowSize(1280, 900),
	)
	// Every confirmation is answered yes, as the person clicking would.
	chromedp.ListenTarget(ctx, func(ev any) {
		if _, ok := ev.(*cdppage.EventJavascriptDialogOpening); ok {
			go chromedp.Run(ctx, cdppage.HandleJavaScriptDialog(true))
		}
	})
	b := &browser{t: t, ctx: ctx, base: srv.URL, shots: []string{t.ArtifactDir()}}
	if d := os.Getenv("SUNDIAL_CONSOLE_SCREENSHOTS"); d != "" {
		b.shots = append(b.shots, d)
	}
	b.run(network.Enable())
	if who != "" {
		b.run(network.SetExtraHTTPHeaders(network.Headers{"X-Test-Identity": who}))
	}
	return b
}

func (b *browser) run(actions ...chromedp.Action) {
	b.t.Helper()
	if err := chromedp.Run(b.ctx, actions...); err != nil {
		b.t.Fatal(err)
	}
}

// open loads a path and returns the text the page shows.
func (b *browser) open(path string) string {
	b.t.Helper()
	b.run(chromedp.Navigate(b.base+path), chromedp.WaitReady("#live", chromedp.ByQuery))
	return b.text()
}

// text is what the page shows in its main part now.
func (b *browser) text() string {
	b.t.Helper()
	var s string
	b.run(chromedp.Text("main", &s, chromedp.ByQuery))
	return strings.Join(strings.Fields(s), " ")
}

// click clicks the element sel finds and waits for the next page: the
// page it leaves is marked, and the wait ends once a document without
// the mark has loaded.
func (b *browser) click(sel string) string {
	b.t.Helper()
	b.run(chromedp.Evaluate(`window.__leaving = true`, nil), chromedp.Click(sel, chromedp.ByQuery))
	for deadline := time.Now().Add(30 * time.Second); ; {
		var arrived bool
		// While the old document goes and the new one comes the
		// evaluation may fail: that is not yet arrived.
		err := chromedp.Run(b.ctx, chromedp.Evaluate(`!window.__leaving && document.readyState === "complete" && !!document.getElementById("live")`, &arrived))
		if err == nil && arrived {
			break
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("clicking %s led to no new page within 30 s (last error: %v)", sel, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return b.text()
}

// shoot takes a screenshot of the whole page as name.png.
func (b *browser) shoot(name string) {
	b.t.Helper()
	var png []byte
	b.run(chromedp.FullScreenshot(&png, 100))
	for _, dir := range b.shots {
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
}

// clippedStrips counts the strips of occurrences drawn past the window's
// right edge: their newest cells, the ones an on-call engineer looks at
// first, out of view.
func (b *browser) clippedStrips() int {
	b.t.Helper()
	var n int
	b.run(chromedp.Evaluate(`[...document.querySelectorAll("svg.strip")].filter(s => s.getBoundingClientRect().right > document.documentElement.clientWidth).length`, &n))
	return n
}

// pwned reports whether any script a page's text tried to run ran.
func (b *browser) pwned() bool {
	b.t.Helper()
	var v bool
	b.run(chromedp.Evaluate(`window.__pwned !== undefined`, &v))
	return v
}

func wants(t *testing.T, where, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s does not show %q; it shows:\n%s", where, w, got)
		}
	}
}

// An on-call engineer's round in a real browser: the projects page, a
// project, a job; pause it with a reason and see the reason, resume it,
// trigger it and see the new invocation, backfill an hour and cancel it,
// abort a running one, open a log;
// a refused config shows its error. Screenshots of each page go to the
// test's artifacts (and to docs/console with SUNDIAL_CONSOLE_SCREENSHOTS).
func TestBrowserOnCallRound(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	b := newBrowser(t, s, admin)

	home := b.open("/")
	wants(t, "the projects page", home, "payments", "demo", "search", "refused", "9f86d081884c")
	b.shoot("projects")

	jobs := b.click(`a[href="/projects/payments"]`)
	wants(t, "the payments page", jobs, "settle", "nightly-report", "reconcile", "Every 10 minutes", "PAUSED",
		"<script>window.__pwned=2</script> maintenance", "by user:olive@example.com")
	b.shoot("jobs")
	if n := b.clippedStrips(); n > 0 {
		t.Errorf("the payments page cuts off the newest occurrences of %d jobs' strips", n)
	}

	job := b.click(`a[href="/projects/payments/jobs/settle"]`)
	wants(t, "the settle page", job, "payments/settle", "Timeline, last 24h", "Duration of recent runs", "History", "bank acme: 503")
	b.shoot("job")

	b.run(chromedp.SendKeys(`input[name=reason]`, "bank acme maintenance until 14:00", chromedp.ByQuery))
	paused := b.click(`form[action$="/pause"] button`)
	wants(t, "the page after pausing", paused, "Done: paused", "PAUSED", "bank acme maintenance until 14:00", "paused by "+admin)
	if got := s.view(t, "payments/settle").State.Reason.Note; got != "bank acme maintenance until 14:00" {
		t.Errorf("the job's pause reason is %q", got)
	}
	resumed := b.click(`form[action$="/resume"] button`)
	wants(t, "the page after resuming", resumed, "Done: resumed")
	if strings.Contains(resumed, "PAUSED") && !strings.Contains(resumed, "pause") {
		t.Errorf("after resuming the page still says PAUSED: %s", resumed)
	}
	triggered := b.click(`form[action$="/trigger"] button`)
	// settle is between a run and the next, so the trigger may run or be
	// recorded as skipped (overrun): either way it is in the history.
	wants(t, "the page after triggering", triggered, "Done: triggered", "manual-1", "triggered by "+admin)

	// Backfill the hour before the demo began, typed in UTC: the range
	// shows at once, with a Cancel; then cancel it.
	b.run(chromedp.SetValue(`input[name=from]`, "2026-03-06T19:00", chromedp.ByQuery),
		chromedp.SetValue(`input[name=to]`, "2026-03-06T20:00", chromedp.ByQuery))
	backfill := b.click(`form[action$="/backfill"] button`)
	wants(t, "the page after a backfill", backfill, "Done: backfill started", "Backfill under way",
		"from 2026-03-06 19:00:00 UTC to 2026-03-06 20:00:00 UTC, not included", "Cancel the backfill")
	if bf := s.view(t, "payments/settle").State.Backfill; bf == nil || !bf.From.Equal(time.Date(2026, 3, 6, 19, 0, 0, 0, time.UTC)) {
		t.Errorf("the job's backfill after the form is %+v; want one from 19:00 UTC, whatever the browser's zone", bf)
	}
	b.shoot("job-backfill")
	canceled := b.click(`form[action$="/cancel-backfill"] button`)
	wants(t, "the page after canceling the backfill", canceled, "Done: backfill canceled")

	// A job whose invocations run on their own: trigger one, let it
	// start, abort it from its page.
	b.open("/projects/payments/jobs/watch-deploys")
	b.click(`form[action$="/trigger"] button`)
	// Up to a minute past the server's clock, which a target that ran
	// long may have left ahead of the fake clock's.
	s.runUntil(t, s.now().Add(time.Minute))
	running := b.open("/projects/payments/jobs/watch-deploys")
	wants(t, "watch-deploys after its trigger ran", running, "Running now", "RUNNING")
	inv := b.click(`ul.active a`)
	wants(t, "the running invocation", inv, "RUNNING", "manual-1", "Abort this invocation")
	aborted := b.click(`form[action$="/abort"] button`)
	wants(t, "the page after aborting", aborted, "Done: aborted")
	inv = b.open("/projects/payments/jobs/watch-deploys/invocations/manual-1")
	wants(t, "the aborted invocation", inv, "ABORTED")

	// A log whose lines look like markup is shown as the lines.
	b.open("/projects/payments/jobs/nightly-report")
	b.shoot("job-nightly-report")
	log := b.click(`table.history tbody a`)
	wants(t, "the nightly report's invocation", log, "Debug log", "<script>window.__pwned=3</script>", `"><img src=x onerror=window.__pwned=4>`, "Download the log")
	b.shoot("invocation")

	b.open("/")
	errPage := b.click(`a.refused`)
	wants(t, "the configs page", errPage, "search.yaml:12", `"<script>window.__pwned=5</script>" is not a schedule`, "is refused", refusedSHA[:12])
	b.shoot("configs")

	play := b.open("/playground?expr=30+2+*+*+*&tz=America%2FNew_York")
	wants(t, "the playground", play, "At 02:30, America/New_York", "DST: the offset changes")
	b.shoot("playground")

	b.open("/projects/payments/jobs/" + "%22%3E%3Cimg%20src=x%20onerror=window.__pwned=1%3E")
	if b.pwned() {
		t.Error("a script in a job id, reason, log line or config error ran")
	}

	// A phone: the jobs page in 390 px.
	b.run(emulation.SetDeviceMetricsOverride(390, 844, 2, true))
	b.open("/projects/payments")
	b.shoot("jobs-phone")
}

// The lists refresh in place: a job paused elsewhere shows as paused on
// the open page without a reload, and the page is the same document.
func TestBrowserListRefreshesInPlace(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	b := newBrowser(t, s, admin)
	before := b.open("/projects/payments?q=settle")
	if strings.Contains(before, "paused from elsewhere") {
		t.Fatalf("settle is paused before the test pauses it: %s", before)
	}
	b.run(chromedp.Evaluate(`window.__samePage = true`, nil))
	if err := s.eng.Pause(s.ctx, "payments/settle", owner, "paused from elsewhere"); err != nil {
		t.Fatal(err)
	}
	var swapped, same bool
	b.run(
		chromedp.Evaluate(`window.sundialRefresh()`, &swapped, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }),
		chromedp.Evaluate(`window.__samePage === true`, &same),
	)
	after := b.text()
	if !swapped || !same {
		t.Errorf("the refresh swapped the list: %v; the page stayed the same document: %v", swapped, same)
	}
	wants(t, "the list after its refresh", after, "paused from elsewhere", "by "+owner)
}

// Hostile text — a job id, a pause reason, a log line, a config error —
// shows as text on every page where it appears, and none of it runs.
func TestBrowserHostileTextRendersAsText(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	b := newBrowser(t, s, admin)
	inv := s.newest(t, "payments/nightly-report")
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/", []string{"search"}},
		{"/projects/payments", []string{hostileID, hostileReason}},
		{"/projects/payments/jobs/%22%3E%3Cimg%20src=x%20onerror=window.__pwned=1%3E", []string{"payments/" + hostileID}},
		{"/projects/payments/jobs/reconcile", []string{hostileReason}},
		{invPath("nightly-report", inv.ID), []string{"<script>window.__pwned=3</script>", `"><img src=x onerror=window.__pwned=4>`, `wrote report "daily" <b>ok</b>`}},
		{"/configs", []string{hostileConfig}},
		{"/projects/search", []string{hostileConfig}},
	} {
		got := b.open(tc.path)
		wants(t, tc.path, got, tc.want...)
		if b.pwned() {
			t.Errorf("%s: a script from the page's text ran", tc.path)
		}
	}
}
