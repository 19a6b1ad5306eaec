// Package browsertest starts Debian's chromium, headless, for the tests
// that drive the web console and the sign-in flow in a real browser.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Chromium returns the path of Debian's chromium, skipping the test when
// it is absent, unless SUNDIAL_REQUIRE_BROWSER is set (as in CI), where
// its absence fails the test.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("SUNDIAL_REQUIRE_BROWSER") != "" {
		t.Fatal("chromium is not installed and SUNDIAL_REQUIRE_BROWSER is set: apt-get install -y chromium")
	}
	t.Skip("chromium is not installed (apt-get install -y chromium); set SUNDIAL_REQUIRE_BROWSER=1 to fail instead")
	return ""
}

// Tab starts chromium with a profile of its own and returns the context
// of a tab in it, for chromedp.Run. The browser is gone, and its profile
// removed, when the test ends; timeout bounds everything the tab does.
// extra options (a window size, an environment) add to the defaults.
func Tab(t testing.TB, timeout time.Duration, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	exe := Chromium(t)
	// Not t.TempDir: chromium's helpers may still write to its profile
	// for a moment after the browser is gone, which would fail the test
	// in TempDir's cleanup.
	profile, err := os.MkdirTemp("", "sundial-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 50 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("chromium's profile %s left behind", profile)
	})
	opts := append(chromedp.DefaultExecAllocatorOptions[:0:0],
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(profile),
	)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	// The browser starts here rather than at the test's first action, and
	// is started again if it exits before it listens: on a machine whose
	// cores are all taken (CI running every package's tests at once),
	// chromium sometimes dies at start, which says nothing of the page
	// under test.
	for attempt := 1; attempt <= 3; attempt++ {
		allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(opts, extra...)...)
		tab, cancelTab := chromedp.NewContext(allocCtx)
		if err = chromedp.Run(tab); err == nil {
			t.Cleanup(cancelAlloc)
			t.Cleanup(cancelTab)
			return tab
		}
		cancelTab()
		cancelAlloc()
		t.Logf("chromium did not start (attempt %d of 3): %v", attempt, err)
	}
	t.Fatalf("chromium did not start: %v", err)
	return nil
}
