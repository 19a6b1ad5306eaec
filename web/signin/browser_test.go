package signin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/internal/browsertest"
	"github.com/sundial-cron/sundial/web/signin"
)

// A person signs in through a real browser: the sign-in URL sends it to
// the issuer, which sends it back; whoami then names the person. Signing
// out makes whoami anonymous again, and the old session cookie, put back
// into the browser, is refused.
func TestBrowserSignInAndSignOut(t *testing.T) {
	t.Parallel()
	s := newSite(t, siteOptions{})
	ctx := browsertest.Tab(t, 2*time.Minute)

	whoami := func() (identity, errMsg string) {
		t.Helper()
		var text string
		if err := chromedp.Run(ctx,
			chromedp.Navigate(s.srv.URL+"/api/v1/whoami"),
			chromedp.Text("body", &text, chromedp.ByQuery),
		); err != nil {
			t.Fatal(err)
		}
		var v struct{ Identity, Error string }
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			t.Fatalf("whoami: %v: %q", err, text)
		}
		return v.Identity, v.Error
	}

	if id, _ := whoami(); id != string(access.Anonymous) {
		t.Fatalf("before sign-in the browser is %q, want anonymous", id)
	}

	var landed, body string
	var shot []byte
	if err := chromedp.Run(ctx,
		chromedp.Navigate(s.srv.URL+signin.SignInPath+"?next=/api/v1/whoami"),
		chromedp.WaitReady("body", chromedp.ByQuery),
		chromedp.Location(&landed),
		chromedp.Text("body", &body, chromedp.ByQuery),
		chromedp.FullScreenshot(&shot, 100), // 100: PNG
	); err != nil {
		t.Fatal(err)
	}
	shotPath := filepath.Join(t.ArtifactDir(), "signed-in.png")
	if err := os.WriteFile(shotPath, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("after sign-in at %s; screenshot %s (kept with go test -artifacts)", landed, shotPath)
	if landed != s.srv.URL+"/api/v1/whoami" {
		t.Errorf("sign-in landed at %s, want %s/api/v1/whoami", landed, s.srv.URL)
	}
	if !strings.Contains(body, string(access.User(alice))) {
		t.Errorf("the page after sign-in says %q, want it to name %s", body, access.User(alice))
	}
	if id, msg := whoami(); id != string(access.User(alice)) {
		t.Fatalf("after sign-in the browser is %q (%s), want %s", id, msg, access.User(alice))
	}

	var cookies []*network.Cookie
	if err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		cookies, err = network.GetCookies().WithURLs([]string{s.srv.URL}).Do(ctx)
		return err
	})); err != nil {
		t.Fatal(err)
	}
	var session *network.Cookie
	for _, c := range cookies {
		if c.Name == signin.SessionCookie {
			session = c
		}
	}
	if session == nil || !session.HTTPOnly || session.SameSite != network.CookieSameSiteLax {
		t.Fatalf("the browser's session cookie is %+v; want HttpOnly and SameSite=Lax", session)
	}

	// Sign out as the console's button would: a same-origin POST.
	var status float64
	if err := chromedp.Run(ctx, chromedp.Evaluate(
		`fetch("`+signin.SignOutPath+`", {method: "POST"}).then(r => r.redirected ? 303 : r.status)`, &status,
		func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) },
	)); err != nil {
		t.Fatal(err)
	}
	if status != 303 {
		t.Errorf("sign-out answered %v, want a redirect", status)
	}
	if id, msg := whoami(); id != string(access.Anonymous) {
		t.Errorf("after sign-out the browser is %q (%s), want anonymous", id, msg)
	}

	// The old cookie, put back, is refused.
	if err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		return network.SetCookie(session.Name, session.Value).WithURL(s.srv.URL).WithHTTPOnly(true).Do(ctx)
	})); err != nil {
		t.Fatal(err)
	}
	if id, msg := whoami(); id != "" || !strings.Contains(msg, "ended by sign-out") {
		t.Errorf("the old session cookie replayed: identity %q, error %q; want refused as ended by sign-out", id, msg)
	}
}
