package console_test

import (
	"testing"

	"github.com/chromedp/cdproto/emulation"
)

// The objectives in a real browser: the project's page and a job's, from
// the jobs page's tab, on a desktop and on a phone. Screenshots go to the
// test's artifacts (and to docs/console with SUNDIAL_CONSOLE_SCREENSHOTS).
func TestBrowserObjectives(t *testing.T) {
	t.Parallel()
	s := objectivesSite(t)
	b := newBrowser(t, s, admin)

	b.open("/projects/billing")
	page := b.click(`nav.views a[href="/projects/billing/objectives"]`)
	wants(t, "the objectives page", page, "billing: objectives", "The project", "settle", "times over", "Without objectives: cleanup")
	b.shoot("objectives")

	job := b.click(`a[href="/projects/billing/jobs/settle"]`)
	wants(t, "settle's page", job, "Objectives, last 7 days", "99% of scheduled launches within 30s of their time", "spent,")
	b.shoot("job-objectives")

	b.run(emulation.SetDeviceMetricsOverride(390, 844, 2, true))
	b.open("/projects/billing/objectives")
	b.shoot("objectives-phone")
}
