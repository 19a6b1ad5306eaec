package signin_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/web/signin"
)

func TestSignInLandsOnNextAndWhoAmIShowsTheUser(t *testing.T) {
	t.Parallel()
	s := newSite(t, siteOptions{})
	b := s.browser()
	if status, id := b.whoami(s); status != http.StatusOK || id != string(access.Anonymous) {
		t.Fatalf("before sign-in: whoami = %d %q, want anonymous", status, id)
	}
	if got := b.signIn(s, "/console/jobs?project=billing"); got != "/console/jobs?project=billing" {
		t.Errorf("landed on %q, want /console/jobs?project=billing", got)
	}
	if status, id := b.whoami(s); status != http.StatusOK || id != string(access.User(alice)) {
		t.Fatalf("after sign-in: whoami = %d %q, want %s", status, id, access.User(alice))
	}
}

func TestCookiesAreHttpOnlyLaxAndSecureUnlessInsecureWasAskedFor(t *testing.T) {
	t.Parallel()
	s := newSite(t, siteOptions{})
	b := s.browser()
	resp, _ := b.get(s.srv.URL + signin.SignInPath)
	resp, _ = b.get(resp.Header.Get("Location"))
	resp, _ = b.get(resp.Header.Get("Location"))
	var sess *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == signin.SessionCookie {
			sess = c
		}
	}
	if sess == nil {
		t.Fatal("callback set no session cookie")
	}
	if !sess.HttpOnly || sess.SameSite != http.SameSiteLaxMode || sess.MaxAge != int(signin.DefaultSessionTTL.Seconds()) {
		t.Errorf("session cookie %v: want HttpOnly, SameSite=Lax, Max-Age 12h", sess)
	}
	if sess.Secure {
		t.Errorf("session cookie %v is Secure though insecure cookies were asked for at localhost", sess)
	}

	// Over https: Secure, and named with the __Host- prefix.
	secure, err := signin.NewOIDC(context.Background(), signin.OIDCOptions{
		Issuer: s.is.URL(), ClientID: clientID, RedirectURL: "https://sundial.example.com" + signin.CallbackPath,
		Keys: s.keys, Revocations: s.revoke, Now: s.clk.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	secure.Handler().ServeHTTP(w, httptest.NewRequest("GET", "https://sundial.example.com"+signin.SignInPath, nil))
	if cs := w.Result().Cookies(); len(cs) != 1 || cs[0].Name != "__Host-sundial_signin" || !cs[0].Secure || !cs[0].HttpOnly || cs[0].Path != "/" || cs[0].Domain != "" {
		t.Errorf("over https the sign-in cookie is %v; want __Host-sundial_signin, Secure, HttpOnly, Path=/, no Domain", cs)
	}

	// Insecure cookies are refused anywhere but localhost.
	for _, tt := range []struct {
		redirect string
		insecure bool
		wantErr  string
	}{
		{"http://sundial.example.com" + signin.CallbackPath, true, "only for development at http://localhost"},
		{"https://127.0.0.1" + signin.CallbackPath, true, "only for development at http://localhost"},
		{"http://127.0.0.1:8080" + signin.CallbackPath, false, "plain http"},
		{"https://sundial.example.com/elsewhere", false, "its path must be"},
	} {
		_, err := signin.NewOIDC(context.Background(), signin.OIDCOptions{
			Issuer: s.is.URL(), ClientID: clientID, RedirectURL: tt.redirect, Keys: s.keys,
			Revocations: s.revoke, InsecureCookies: tt.insecure, Now: s.clk.Now,
		})
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("NewOIDC(%s, insecure %t) = %v, want an error containing %q", tt.redirect, tt.insecure, err, tt.wantErr)
		}
	}
}

func TestSignInNeverRedirectsOffSite(t *testing.T) {
	t.Parallel()
	s := newSite(t, siteOptions{})
	for _, next := range []string{
		"https://evil.example.com/", "//evil.example.com/", "/\\evil.example.com", "http:/evil.example.com",
		"javascript:alert(1)", "evil.example.com", "/\t/evil.example.com", "/\n/evil.example.com", "\t//evil.example.com",
	} {
		b := s.browser()
		if got := b.signIn(s, next); got != "/" {
			t.Errorf("sign-in with next=%q landed on %q, want /", next, got)
		}
	}
}

func TestSignOutEndsTheSessionEvenIfTheCookieIsReplayed(t *testing.T) {
	t.Parallel()
	s := newSite(t, siteOptions{})
	b := s.browser()
	b.signIn(s, "/")
	old := b.cookie(s, signin.SessionCookie)
	resp, err := b.client.Post(s.srv.URL+signin.SignOutPath, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out: %s", resp.Status)
	}
	if c := b.cookie(s, signin.SessionCookie); c != nil {
		t.Errorf("the session cookie is still set after sign-out: %v", c)
	}
	if status, id := b.whoami(s); status != http.StatusOK || id != string(access.Anonymous) {
		t.Errorf("after sign-out: whoami = %d %q, want anonymous", status, id)
	}
	// An attacker who copied the cookie before sign-out replays it.
	req, _ := http.NewRequest("GET", s.srv.URL+"/api/v1/whoami", nil)
	req.AddCookie(&http.Cookie{Name: old.Name, Value: old.Value})
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusUnauthorized {
		t.Errorf("the session cookie replayed after sign-out: %s, want 401", r.Status)
	}
}

func TestSessionExpiresAfterItsTTL(t *testing.T) {
	t.Parallel()
	s := newSite(t, siteOptions{})
	b := s.browser()
	b.signIn(s, "/")
	s.clk.Advance(signin.DefaultSessionTTL - time.Second)
	if status, id := b.whoami(s); status != http.StatusOK || id != string(access.User(alice)) {
		t.Fatalf("a second before expiry: whoami = %d %q", status, id)
	}
	s.clk.Advance(time.Second)
	if status, msg := b.whoami(s); status != http.StatusUnauthorized || !strings.Contains(msg, "expired") {
		t.Errorf("at expiry: whoami = %d %q, want 401 expired", status, msg)
	}
}

func TestTamperedSessionCookieIsRefused(t *testing.T) {
	t.Parallel()
	s := newSite(t, siteOptions{})
	b := s.browser()
	b.signIn(s, "/")
	c := b.cookie(s, signin.SessionCookie)
	raw := []byte(c.Value)
	for i := range raw {
		tampered := append([]byte(nil), raw...)
		// Flip one character into another of the base64url alphabet.
		if tampered[i] == 'A' {
			tampered[i] = 'B'
		} else {
			tampered[i] = 'A'
		}
		req, _ := http.NewRequest("GET", "/", nil)
		req.AddCookie(&http.Cookie{Name: signin.SessionCookie, Value: string(tampered)})
		if id, err := s.oidc.Authenticate(req); err == nil {
			t.Fatalf("the session cookie altered at byte %d authenticated as %q", i, id)
		}
	}
	// Sealed by another server's key.
	other, _ := signin.NewSealer([]byte(strings.Repeat("o", signin.KeyLen)))
	req, _ := http.NewRequest("GET", "/", nil)
	req.AddCookie(&http.Cookie{Name: signin.SessionCookie, Value: other.Seal(signin.SessionCookie,
		[]byte(`{"i":"x","m":"mallory@example.com","t":"2026-03-02T10:00:00Z","e":"2026-03-03T10:00:00Z"}`))})
	if id, err := s.oidc.Authenticate(req); err == nil {
		t.Errorf("a session sealed with another key authenticated as %q", id)
	}
}

func TestReplayedStateIsRefused(t *testing.T) {
	t.Parallel()
	s := newSite(t, siteOptions{})
	b := s.browser()
	callback := b.startSignIn(s, "/")
	state := b.cookie(s, "sundial_signin")
	resp, _ := b.get(callback)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the first callback: %s", resp.Status)
	}
	// The same callback URL with the same sign-in cookie, as an attacker
	// who captured both would send them.
	req, _ := http.NewRequest("GET", callback, nil)
	req.AddCookie(&http.Cookie{Name: state.Name, Value: state.Value})
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusUnauthorized {
		t.Errorf("replayed state: %s, want 401", r.Status)
	}
	if n := s.is.Exchanges(); n != 1 {
		t.Errorf("the issuer exchanged %d codes; want 1: the replay must be refused before the exchange", n)
	}
}

func TestStateFromAnotherBrowserIsRefused(t *testing.T) {
	t.Parallel()
	s := newSite(t, siteOptions{})
	victim, attacker := s.browser(), s.browser()
	// The attacker starts a sign-in and lures the victim to its callback
	// URL (login CSRF): the victim's browser holds its own sign-in cookie.
	victim.startSignIn(s, "/")
	callback := attacker.startSignIn(s, "/")
	resp, body := victim.get(callback)
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "state does not match") {
		t.Errorf("another browser's callback: %s %s, want 401 state does not match", resp.Status, body)
	}
	if status, id := victim.whoami(s); id != string(access.Anonymous) {
		t.Errorf("the victim is %d %q after the attack, want anonymous", status, id)
	}
	// And with no sign-in cookie at all.
	fresh := s.browser()
	if resp, _ := fresh.get(attacker.startSignIn(s, "/")); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a callback in a browser that never started sign-in: %s, want 401", resp.Status)
	}
}

func TestUnverifiedEmailIsRefused(t *testing.T) {
	t.Parallel()
	no := false
	s := newSite(t, siteOptions{verified: &no})
	b := s.browser()
	resp, body := b.get(b.startSignIn(s, "/"))
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "not verified") {
		t.Errorf("unverified email: %s %s, want 401 not verified", resp.Status, body)
	}
}

// The issuer refuses a code exchanged without the PKCE verifier or with
// another one, and exchanges it with the right one: the flow's verifier is
// checked, not merely sent.
func TestIssuerRefusesMissingOrWrongPKCEVerifier(t *testing.T) {
	t.Parallel()
	s := newSite(t, siteOptions{})
	conf := oauth2.Config{ClientID: clientID, ClientSecret: clientSecret, RedirectURL: s.srv.URL + signin.CallbackPath,
		Endpoint: oauth2.Endpoint{AuthURL: s.is.URL() + "/authorize", TokenURL: s.is.URL() + "/token"}}
	verifier := oauth2.GenerateVerifier()
	b := s.browser()
	resp, _ := b.get(conf.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)))
	cb, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	code := cb.Query().Get("code")
	ctx := context.Background()
	if _, err := conf.Exchange(ctx, code); err == nil || !strings.Contains(err.Error(), "PKCE") {
		t.Errorf("exchange without a verifier: %v, want refused for PKCE", err)
	}
	if _, err := conf.Exchange(ctx, code, oauth2.VerifierOption(oauth2.GenerateVerifier())); err == nil || !strings.Contains(err.Error(), "PKCE") {
		t.Errorf("exchange with another verifier: %v, want refused for PKCE", err)
	}
	if _, err := conf.Exchange(ctx, code, oauth2.VerifierOption(verifier)); err != nil {
		t.Errorf("exchange with the right verifier: %v", err)
	}
	bad := conf
	bad.ClientSecret = "wrong"
	resp, _ = b.get(conf.AuthCodeURL("st", oauth2.S256ChallengeOption(verifier)))
	cb, _ = url.Parse(resp.Header.Get("Location"))
	if _, err := bad.Exchange(ctx, cb.Query().Get("code"), oauth2.VerifierOption(verifier)); err == nil || !strings.Contains(err.Error(), "invalid_client") {
		t.Errorf("exchange with a wrong client secret: %v, want invalid_client", err)
	}
}
