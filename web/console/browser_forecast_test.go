package console_test

import (
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// The load forecast in a real browser, as an operator opens it before a
// busy night: the chart spans a desktop's page with the herd's minute
// named on it, each project has its small chart, and on a phone the page
// is no wider than the screen. Screenshots at each width.
func TestBrowserLoadForecast(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	s.herd(t)
	b := newBrowser(t, s, admin)
	text := b.open("/forecast")
	wants(t, "the forecast", text, "Load forecast", "the busiest minute 02:00 UTC", "peak: ", "reports", "payments")
	var chartW, chartH float64
	var sparks int
	b.run(chromedp.Evaluate(`document.querySelector("svg.forecast").getBoundingClientRect().width`, &chartW),
		chromedp.Evaluate(`document.querySelector("svg.forecast").getBoundingClientRect().height`, &chartH),
		chromedp.Evaluate(`document.querySelectorAll("svg.spark").length`, &sparks))
	if chartW < 1100 || chartH < 200 || sparks != 4 {
		t.Errorf("at 1280 px the forecast is %v by %v with %d small charts; want it across the page, 200 tall, and one per project (4)", chartW, chartH, sparks)
	}
	b.shoot("forecast")
	one := b.click(`a[href="/forecast?project=reports"]`)
	wants(t, "reports' forecast", one, "Load forecast: reports", "80 jobs", "every project")
	b.shoot("forecast-project")

	b.run(emulation.SetDeviceMetricsOverride(390, 844, 2, true))
	b.open("/forecast")
	var wide bool
	b.run(chromedp.Evaluate(`document.documentElement.scrollWidth > document.documentElement.clientWidth`, &wide))
	if wide {
		t.Error("the forecast is wider than a phone")
	}
	b.shoot("forecast-phone")
}

// What a project's last import did to its schedules, in a real browser,
// reached from the configs page: the herd it made first, with the H that
// spreads each job, then the jobs; no wider than a phone. A screenshot
// at a desktop's width.
func TestBrowserConfigChanges(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	s.reimport(t)
	b := newBrowser(t, s, admin)
	b.open("/configs")
	changes := b.click(`a[href="/configs/nightly/changes"]`)
	wants(t, "nightly's changes", changes, "Last import of nightly", "1 second past 100 launches", "→ H 2 * * *", "index changed")
	b.shoot("config-changes")

	b.run(emulation.SetDeviceMetricsOverride(390, 844, 2, true))
	b.open("/configs/nightly/changes")
	var wide bool
	b.run(chromedp.Evaluate(`document.documentElement.scrollWidth > document.documentElement.clientWidth`, &wide))
	if wide {
		t.Error("the changes page is wider than a phone")
	}
}
