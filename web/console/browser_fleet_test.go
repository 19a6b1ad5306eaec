package console_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// The fleet and the grid in a real browser, as the on-call engineer opens
// them: the fleet names what runs and what failed, with times to the
// second in the viewer's zone, naming it, and each failure opens its
// invocation; the grid fits a desktop's width, says its columns' times
// in the viewer's zone, and a failed cell opens its invocation; a job's
// charts span the page. On a phone the fleet's rows are cards and the
// grid opens on its newest slots beside its jobs' names. Screenshots of
// both at each width.
func TestBrowserFleetAndGrid(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	if _, err := s.eng.Trigger(s.ctx, "payments/watch-deploys", owner); err != nil {
		t.Fatal(err)
	}
	s.runUntil(t, s.now().Add(time.Minute))
	b := newBrowser(t, s, admin)

	fleet := b.open("/fleet")
	wants(t, "the fleet", fleet, "1 running now", "2 jobs failed in the last 24 hours", "demo/always-fails", "payments/settle",
		"payments/watch-deploys", "manual-1", "failing, ", "succeeded since")
	var shown string
	b.run(chromedp.Text(`section[aria-labelledby=failed] tbody time`, &shown, chromedp.ByQuery))
	// The viewer is in Paris, an hour ahead of UTC in March.
	if !regexp.MustCompile(`\d\d:\d\d:\d\d`).MatchString(shown) || !regexp.MustCompile(`GMT\+1|CET`).MatchString(shown) {
		t.Errorf("a time on the fleet reads %q; want it to the second, in the viewer's zone, naming it", shown)
	}
	b.shoot("fleet")
	inv := b.click(`section[aria-labelledby=failed] tbody td a`)
	wants(t, "the newest failure from the fleet", inv, "FAILED", "Debug log")

	grid := b.open("/projects/payments/grid")
	wants(t, "the grid", grid, "settle", "nightly-report", "reconcile", "a column per hour")
	var fits bool
	b.run(chromedp.Evaluate(`document.querySelector("table.grid").getBoundingClientRect().right <= document.documentElement.clientWidth`, &fits))
	if !fits {
		t.Error("the grid is wider than a desktop's window")
	}
	var zone, first string
	b.run(chromedp.Text(`.gridnote .zone`, &zone, chromedp.ByQuery),
		chromedp.AttributeValue(`table.grid thead th.slot time`, "datetime", &first, nil, chromedp.ByQuery))
	var label string
	b.run(chromedp.Text(`table.grid thead th.slot time`, &label, chromedp.ByQuery))
	start, err := time.Parse(time.RFC3339, first)
	if err != nil {
		t.Fatal(err)
	}
	if paris, _ := time.LoadLocation("Europe/Paris"); label != start.In(paris).Format("15:04") || zone == "UTC" {
		t.Errorf("the grid's first column reads %q in zone %q; want %s, the viewer's time", label, zone, start.In(paris).Format("15:04"))
	}
	b.shoot("grid")
	failed := b.click(`table.grid td a.fail`)
	wants(t, "a failed cell's invocation", failed, "FAILED", "bank acme: 503")

	// A job's charts span a desktop's page, tall enough to read a trend.
	b.open(jobPath("settle"))
	var timelineW, chartW, chartH float64
	b.run(chromedp.Evaluate(`document.querySelector("svg.timeline").getBoundingClientRect().width`, &timelineW),
		chromedp.Evaluate(`document.querySelector("svg.durations").getBoundingClientRect().width`, &chartW),
		chromedp.Evaluate(`document.querySelector("svg.durations").getBoundingClientRect().height`, &chartH))
	if timelineW < 1100 || chartW < 1100 || chartH < 200 {
		t.Errorf("at 1280 px the timeline is %v wide, the duration chart %v by %v; want them across the page and 200 tall", timelineW, chartW, chartH)
	}

	b.run(emulation.SetDeviceMetricsOverride(390, 844, 2, true))
	b.open("/fleet")
	b.shoot("fleet-phone")
	var wide bool
	b.run(chromedp.Evaluate(`document.documentElement.scrollWidth > document.documentElement.clientWidth`, &wide))
	if wide {
		t.Error("the fleet is wider than a phone")
	}
	b.open("/projects/payments/grid")
	var nameLeft, lastRight, width float64
	b.run(chromedp.Evaluate(`document.querySelector("table.grid tbody th").getBoundingClientRect().left`, &nameLeft),
		chromedp.Evaluate(`[...document.querySelectorAll("table.grid thead th.slot")].pop().getBoundingClientRect().right`, &lastRight),
		chromedp.Evaluate(`document.documentElement.clientWidth`, &width))
	if nameLeft < 0 || lastRight > width {
		t.Errorf("on a phone the grid opens with its job names at %v and its newest slot ending at %v of %v; want both in view", nameLeft, lastRight, width)
	}
	b.shoot("grid-phone")
}
