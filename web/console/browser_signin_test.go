package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/sundial-cron/sundial/web/signin"
)

// A team without an identity provider signs in with tokens, in a real
// browser: signed out, the console offers the token sign-in; a reader's
// token shows payments alone, on every page; the session cookie is
// HttpOnly, SameSite=Lax and holds no token; sign-out signs out; and a
// token taken out of the token file (at the restart that reads it) ends
// its session at the next page, which says so and offers the sign-in
// again. Screenshots of the sign-in page at a desktop's and a phone's
// width.
func TestBrowserTokenSignIn(t *testing.T) {
	t.Parallel()
	s := demoSite(t)
	readerToken, readerLine := signin.NewToken(reader)
	_, ownerLine := signin.NewToken(owner)
	ts := newTokenServer(t, s, readerLine, ownerLine)
	b := browse(t, ts, "")

	home := b.open("/")
	if strings.Contains(home, "payments") {
		t.Fatalf("signed out, the projects page shows payments: %s", home)
	}
	b.open("/fleet")
	b.run(chromedp.Click(`header a[href^="/auth/token"]`, chromedp.ByQuery), chromedp.WaitVisible(`input[name=token]`, chromedp.ByQuery))
	var form string
	b.run(chromedp.Text("main", &form, chromedp.ByQuery))
	wants(t, "the sign-in page", form, "Sign in with a token", "sundial_", "12 hours")
	b.shoot("signin")

	b.run(chromedp.SendKeys(`input[name=token]`, readerToken, chromedp.ByQuery))
	fleet := b.click(`main button[type=submit]`)
	wants(t, "the fleet after signing in", fleet, "payments/settle", "Failed in the last 24 hours")
	for _, hidden := range []string{"demo/always-fails", "search"} {
		if strings.Contains(fleet, hidden) {
			t.Errorf("the reader's fleet shows %s: %s", hidden, fleet)
		}
	}
	var who string
	b.run(chromedp.Text("header .who span", &who, chromedp.ByQuery))
	if who != reader {
		t.Errorf("the header says the viewer is %q, want %s", who, reader)
	}
	if home := b.open("/"); !strings.Contains(home, "payments") || strings.Contains(home, "search") {
		t.Errorf("the reader's projects page: %s", home)
	}

	var cookies []*network.Cookie
	b.run(chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		cookies, err = network.GetCookies().WithURLs([]string{b.base}).Do(ctx)
		return err
	}))
	if len(cookies) != 1 || cookies[0].Name != signin.TokenSessionCookie || !cookies[0].HTTPOnly || cookies[0].SameSite != network.CookieSameSiteLax ||
		strings.Contains(cookies[0].Value, strings.TrimPrefix(readerToken, signin.TokenPrefix)) {
		t.Errorf("the browser's cookies: %+v; want the token session's alone, HttpOnly, SameSite=Lax, without the token", cookies)
	}

	out := b.click(`form.signout button`)
	if strings.Contains(out, "payments") {
		t.Errorf("after signing out the projects page shows payments: %s", out)
	}
	var signIn int
	b.run(chromedp.Evaluate(`document.querySelectorAll('header a[href^="/auth/token"]').length`, &signIn))
	if signIn != 1 {
		t.Error("after signing out the header offers no token sign-in")
	}

	// Signed in again; then the operator takes the reader's token out of
	// the file and restarts the server.
	b.run(chromedp.Click(`header a[href^="/auth/token"]`, chromedp.ByQuery), chromedp.WaitVisible(`input[name=token]`, chromedp.ByQuery),
		chromedp.SendKeys(`input[name=token]`, readerToken, chromedp.ByQuery))
	if again := b.click(`main button[type=submit]`); !strings.Contains(again, "payments") {
		t.Fatalf("signing in again: %s", again)
	}
	ts.restart(ownerLine)
	revoked := b.open("/projects/payments")
	wants(t, "the page after the token was revoked", revoked, "401", "no longer accepted", "Sign in with a token")
	if strings.Contains(revoked, "settle") {
		t.Errorf("the page after the token was revoked shows payments' jobs: %s", revoked)
	}

	b.run(emulation.SetDeviceMetricsOverride(390, 844, 2, true))
	b.run(chromedp.Navigate(b.base+signin.TokenSignInPath+"?next=%2F"), chromedp.WaitVisible(`input[name=token]`, chromedp.ByQuery))
	b.shoot("signin-phone")
	var overflow bool
	b.run(chromedp.Evaluate(`document.documentElement.scrollWidth > document.documentElement.clientWidth`, &overflow))
	if overflow {
		t.Error("the sign-in page is wider than a phone")
	}
}
