package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// A job's context in a real browser: the job page lists its coming fire
// times and those its calendars, DST policy and run cap remove, with why;
// a pause typed with an end shows the end and that the job resumes by
// itself; the playground takes days, a window and a cap typed in. Each
// view is shot, on a phone too (docs/console with
// SUNDIAL_CONSOLE_SCREENSHOTS).
func TestBrowserScheduleContext(t *testing.T) {
	t.Parallel()
	s := billingSite(t)
	b := newBrowser(t, s, admin)

	job := b.open(reportPath)
	wants(t, "the report page", job, "not on business-days", "in the DST gap", "on holidays", "past the job's max_runs",
		"3 scheduled runs; 3 left", "its active window ends")
	b.shoot("job-upcoming")

	b.run(chromedp.SendKeys(`input[name=reason]`, "month-end freeze", chromedp.ByQuery),
		chromedp.SetValue(`input[name=until]`, "2026-03-10T12:00", chromedp.ByQuery))
	b.shoot("job-pause-until")
	paused := b.click(`form[action$="/pause"] button`)
	// The end was typed in UTC; the browser, in Paris, shows it there.
	wants(t, "the page after pausing until", paused, "Done: paused", "paused until Mar 10, 13:00:00 GMT+1", "resumes by itself",
		"pause until Mar 10, 13:00:00 GMT+1: month-end freeze")
	b.shoot("job-paused-until")

	play := b.open("/playground?expr=30+2+*+*+*&tz=America%2FNew_York&dst_gap=skip&skip=2026-03-09&only=mon-fri&from=2026-03-04&until=2026-03-13&max_runs=3")
	wants(t, "the playground", play, "not on allowed days", "on skipped days", "in the DST gap", "past the job's max_runs")
	if strings.Contains(play, "mistake") {
		t.Errorf("the playground finds a mistake: %s", play)
	}
	b.shoot("playground-context")

	b.run(emulation.SetDeviceMetricsOverride(390, 844, 2, true))
	b.open(reportPath)
	b.shoot("job-upcoming-phone")
	b.open("/playground?expr=30+2+*+*+*&tz=America%2FNew_York&dst_gap=skip&skip=2026-03-09&only=mon-fri&from=2026-03-04&until=2026-03-13&max_runs=3")
	b.shoot("playground-phone")
}
