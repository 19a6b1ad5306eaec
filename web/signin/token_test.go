package signin_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/web/signin"
)

// tokenServer is a server whose console signs people in with static
// tokens, as signin.New sets it up from the flags, with whoami behind it.
type tokenServer struct {
	t       *testing.T
	clk     *fakeclock.Clock
	dir     string
	rev     signin.Revocations
	setup   signin.Setup
	handler http.Handler
}

// Who the token tests sign in as.
const (
	tokenAlice = "user:alice@example.com"
	tokenBot   = "serviceAccount:deploy-bot@example.com"
)

// newTokenServer starts a server of the single-user shape with the token
// file's lines and a cookie key file, so that a restart (restart) keeps
// the sessions' key.
func newTokenServer(t *testing.T, lines ...string) *tokenServer {
	t.Helper()
	s := &tokenServer{t: t, clk: fakeclock.New(t0), dir: t.TempDir()}
	s.rev = signin.NewMemory(s.clk.Now)
	writeFile(t, filepath.Join(s.dir, "keys"), signin.NewKey()+"\n")
	s.restart(lines...)
	return s
}

// restart starts the server again over the same keys and revocations
// with a token file of these lines: how an operator adds or revokes a
// token.
func (s *tokenServer) restart(lines ...string) {
	s.t.Helper()
	tokens := filepath.Join(s.dir, "tokens")
	writeFile(s.t, tokens, strings.Join(lines, "\n")+"\n")
	setup, err := signin.New(context.Background(), signin.Settings{
		StaticTokensFile: tokens, CookieKeyFile: filepath.Join(s.dir, "keys"), SessionTTL: signin.DefaultSessionTTL, LocalMode: true,
	}, func() (signin.Revocations, error) { return s.rev, nil }, s.clk.Now, slog.New(slog.DiscardHandler))
	if err != nil {
		s.t.Fatal(err)
	}
	s.setup, s.handler = setup, setup.Mount(whoAmI(setup.Chain()))
}

// request is a browser's request to the server: at localhost over plain
// http, unless header says otherwise (a proxy's X-Forwarded-Proto, a
// Host).
func (s *tokenServer) request(method, path string, form url.Values, cookies []*http.Cookie, header http.Header) *httptest.ResponseRecorder {
	s.t.Helper()
	var r *http.Request
	if form != nil {
		r = httptest.NewRequest(method, "http://localhost:8080"+path, strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		r = httptest.NewRequest(method, "http://localhost:8080"+path, nil)
	}
	for k, v := range header {
		r.Header[k] = v
	}
	if h := header.Get("Host"); h != "" {
		r.Host = h
	}
	for _, c := range cookies {
		r.AddCookie(c)
	}
	w := httptest.NewRecorder()
	s.handler.ServeHTTP(w, r)
	return w
}

// signIn posts token to the sign-in form and returns the answer.
func (s *tokenServer) signIn(token, next string, header http.Header) *httptest.ResponseRecorder {
	s.t.Helper()
	return s.request("POST", signin.TokenSignInPath, url.Values{"token": {token}, "next": {next}}, nil, header)
}

// whoami is who the server takes a browser with these cookies for, or
// the error refusing them.
func (s *tokenServer) whoami(cookies []*http.Cookie, header http.Header) (access.Identity, string) {
	s.t.Helper()
	w := s.request("GET", "/api/v1/whoami", nil, cookies, header)
	if w.Code != http.StatusOK {
		return "", w.Body.String()
	}
	var v struct{ Identity access.Identity }
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		s.t.Fatalf("whoami: %v: %s", err, w.Body.String())
	}
	return v.Identity, ""
}

// A token typed into the sign-in page is checked as the API checks a
// bearer token: the file's tokens sign in as their identities, back to
// the page asked for; an unknown, short or missing token is refused with
// the page again and no cookie. The cookie holds neither the token nor
// its hash in clear, is HttpOnly and SameSite=Lax, and lasts the session's
// lifetime.
func TestTokenSignInChecksTheTokenAsTheAPIDoes(t *testing.T) {
	t.Parallel()
	alice, aliceLine := signin.NewToken(tokenAlice)
	bot, botLine := signin.NewToken(tokenBot)
	s := newTokenServer(t, aliceLine, botLine)

	for _, c := range []struct {
		name, token, next string
		status            int
		who               access.Identity
		says, lands       string
	}{
		{"a person's token", alice, "/projects/payments?state=PAUSED", http.StatusSeeOther, tokenAlice, "", "/projects/payments?state=PAUSED"},
		{"a machine's token", bot, "/", http.StatusSeeOther, tokenBot, "", "/"},
		{"next elsewhere lands at home", alice, "//evil.example/", http.StatusSeeOther, tokenAlice, "", "/"},
		{"a token not in the file", "sundial_" + strings.Repeat("0", 64), "/", http.StatusUnauthorized, "", "token not known to this server", ""},
		{"a token too short", "sundial_short", "/", http.StatusUnauthorized, "", "token too short", ""},
		{"no token", "  ", "/", http.StatusBadRequest, "", "paste a token", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := s.signIn(c.token, c.next, nil)
			if w.Code != c.status {
				t.Fatalf("sign-in: %d, want %d: %s", w.Code, c.status, w.Body.String())
			}
			cookies := w.Result().Cookies()
			if c.who == "" {
				if len(cookies) != 0 || !strings.Contains(w.Body.String(), c.says) || !strings.Contains(w.Body.String(), `name="token"`) {
					t.Errorf("a refused sign-in set %v and says %q; want no cookie, the form again and %q", cookies, w.Body.String(), c.says)
				}
				return
			}
			if got := w.Header().Get("Location"); got != c.lands {
				t.Errorf("landed at %q, want %q", got, c.lands)
			}
			if len(cookies) != 1 {
				t.Fatalf("cookies %v, want the session's", cookies)
			}
			k := cookies[0]
			sum := sha256.Sum256([]byte(c.token))
			if k.Name != signin.TokenSessionCookie || !k.HttpOnly || k.SameSite != http.SameSiteLaxMode || k.MaxAge != int(signin.DefaultSessionTTL.Seconds()) || k.Path != "/" {
				t.Errorf("the session cookie is %+v; want %s, HttpOnly, SameSite=Lax, Path=/, Max-Age 12 h", k, signin.TokenSessionCookie)
			}
			if strings.Contains(k.Value, c.token) || strings.Contains(k.Value, hex.EncodeToString(sum[:])) || strings.Contains(k.Value, strings.TrimPrefix(c.token, signin.TokenPrefix)) {
				t.Errorf("the session cookie holds the token or its hash in clear: %s", k.Value)
			}
			if who, err := s.whoami(cookies, nil); who != c.who {
				t.Errorf("with the cookie the browser is %q (%s), want %s", who, err, c.who)
			}
		})
	}
}

// Over https (TLS at a proxy that says so) the cookie is Secure and named
// with __Host-; at a loopback address over plain http it is neither, as
// browsers keep no Secure cookie there. From afar over plain http the
// page takes no token: it says why, offers no form, and a post is refused
// whatever the token.
func TestTokenSignInCookieIsSecureOverHTTPS(t *testing.T) {
	t.Parallel()
	alice, line := signin.NewToken(tokenAlice)
	s := newTokenServer(t, line)
	for _, c := range []struct {
		name   string
		header http.Header
		status int
		cookie string
		secure bool
	}{
		{"behind a proxy that ended TLS", http.Header{"Host": {"sundial.example.com"}, "X-Forwarded-Proto": {"https"}}, http.StatusSeeOther, "__Host-" + signin.TokenSessionCookie, true},
		{"behind a proxy that says so with Forwarded", http.Header{"Host": {"sundial.example.com"}, "Forwarded": {`for=198.51.100.7;proto=https`}}, http.StatusSeeOther, "__Host-" + signin.TokenSessionCookie, true},
		{"at localhost over plain http", nil, http.StatusSeeOther, signin.TokenSessionCookie, false},
		{"at 127.0.0.1 over plain http", http.Header{"Host": {"127.0.0.1:8080"}}, http.StatusSeeOther, signin.TokenSessionCookie, false},
		{"from afar over plain http", http.Header{"Host": {"sundial.example.com:8080"}}, http.StatusForbidden, "", false},
		{"from afar, a proxy that says http", http.Header{"Host": {"sundial.example.com"}, "X-Forwarded-Proto": {"http"}}, http.StatusForbidden, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := s.signIn(alice, "/", c.header)
			if w.Code != c.status {
				t.Fatalf("sign-in: %d, want %d: %s", w.Code, c.status, w.Body.String())
			}
			cookies := w.Result().Cookies()
			if c.cookie == "" {
				if len(cookies) != 0 || !strings.Contains(w.Body.String(), "plain http") {
					t.Errorf("a sign-in over plain http from afar set %v and says %q", cookies, w.Body.String())
				}
				if form := s.request("GET", signin.TokenSignInPath, nil, nil, c.header).Body.String(); strings.Contains(form, `name="token"`) || !strings.Contains(form, "https") {
					t.Errorf("over plain http from afar the page offers the form, or does not say to use https: %s", form)
				}
				return
			}
			if len(cookies) != 1 || cookies[0].Name != c.cookie || cookies[0].Secure != c.secure {
				t.Fatalf("cookies %+v; want one %s, Secure %t", cookies, c.cookie, c.secure)
			}
			if who, err := s.whoami(cookies, c.header); who != tokenAlice {
				t.Errorf("with the cookie the browser is %q (%s)", who, err)
			}
		})
	}
}

// A session ends when its token is taken out of the token file (at the
// restart that reads it), or maps to another identity there, at its next
// request; a token left in the file keeps its sessions across the
// restart.
func TestTokenSessionEndsWhenItsTokenLeavesTheFile(t *testing.T) {
	t.Parallel()
	alice, aliceLine := signin.NewToken(tokenAlice)
	bot, botLine := signin.NewToken(tokenBot)
	s := newTokenServer(t, aliceLine, botLine)
	aliceCookies := s.signIn(alice, "/", nil).Result().Cookies()
	botCookies := s.signIn(bot, "/", nil).Result().Cookies()

	s.restart(botLine)
	if who, err := s.whoami(aliceCookies, nil); who != "" || !strings.Contains(err, "no longer accepted") {
		t.Errorf("alice's session after her token left the file: %q %s; want refused as no longer accepted", who, err)
	}
	if who, _ := s.whoami(botCookies, nil); who != tokenBot {
		t.Errorf("the bot's session after a restart that kept its token: %q, want %s", who, tokenBot)
	}
	if w := s.signIn(alice, "/", nil); w.Code != http.StatusUnauthorized {
		t.Errorf("signing in again with the revoked token: %d, want 401", w.Code)
	}

	// The bot's hash now names another identity: its sessions are not
	// that identity's.
	s.restart(strings.Replace(botLine, tokenBot, "serviceAccount:other@example.com", 1))
	if who, err := s.whoami(botCookies, nil); who != "" || !strings.Contains(err, "no longer accepted") {
		t.Errorf("a session whose token maps to another identity now: %q %s; want refused", who, err)
	}
}

// Sign-out clears the cookie and ends the session, so a copy of the
// cookie taken before is refused; it is refused from another site's page.
// A session expires at its lifetime whatever is done with it.
func TestTokenSessionSignOutAndExpiry(t *testing.T) {
	t.Parallel()
	alice, line := signin.NewToken(tokenAlice)
	s := newTokenServer(t, line)
	cookies := s.signIn(alice, "/", nil).Result().Cookies()

	if w := s.request("POST", signin.SignOutPath, url.Values{}, cookies, http.Header{"Sec-Fetch-Site": {"cross-site"}}); w.Code != http.StatusForbidden {
		t.Errorf("a cross-site sign-out: %d, want 403", w.Code)
	}
	if who, _ := s.whoami(cookies, nil); who != tokenAlice {
		t.Fatalf("after a refused sign-out the browser is %q, want %s", who, tokenAlice)
	}
	w := s.request("POST", signin.SignOutPath, url.Values{}, cookies, http.Header{"Sec-Fetch-Site": {"same-origin"}})
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/" {
		t.Fatalf("sign-out: %d to %q, want 303 to /", w.Code, w.Header().Get("Location"))
	}
	if cleared := w.Result().Cookies(); len(cleared) != 1 || cleared[0].Name != signin.TokenSessionCookie || cleared[0].MaxAge >= 0 {
		t.Errorf("sign-out set %+v; want the session cookie deleted", cleared)
	}
	if who, err := s.whoami(cookies, nil); who != "" || !strings.Contains(err, "ended by sign-out") {
		t.Errorf("the cookie replayed after sign-out: %q %s; want refused as ended by sign-out", who, err)
	}

	fresh := s.signIn(alice, "/", nil).Result().Cookies()
	s.clk.Advance(signin.DefaultSessionTTL - time.Second)
	if who, _ := s.whoami(fresh, nil); who != tokenAlice {
		t.Errorf("a second before its end the session is %q", who)
	}
	s.clk.Advance(time.Second)
	if who, err := s.whoami(fresh, nil); who != "" || !strings.Contains(err, "expired") {
		t.Errorf("at its end the session is %q %s; want refused as expired", who, err)
	}
}

// The sign-in page runs no script, loads the console's stylesheet alone,
// posts only to this server and is framed by no one: a token typed into
// it goes nowhere else.
func TestTokenSignInPageIsLockedDown(t *testing.T) {
	t.Parallel()
	_, line := signin.NewToken(tokenAlice)
	s := newTokenServer(t, line)
	w := s.request("GET", signin.TokenSignInPath+"?next=%2Fprojects%2Fpayments", nil, nil, nil)
	csp := w.Header().Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "style-src 'self'", "form-action 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %s", csp, want)
		}
	}
	if strings.Contains(csp, "script-src") || w.Header().Get("X-Frame-Options") != "DENY" || w.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("the sign-in page's headers: %v", w.Header())
	}
	body := w.Body.String()
	if !strings.Contains(body, `type="password"`) || !strings.Contains(body, `autocomplete="off"`) || !strings.Contains(body, `value="/projects/payments"`) {
		t.Errorf("the sign-in form: %s", body)
	}
}

// A form on another site cannot sign a browser in as someone else: the
// post is refused before the token is read.
func TestTokenSignInRefusesACrossSitePost(t *testing.T) {
	t.Parallel()
	alice, line := signin.NewToken(tokenAlice)
	s := newTokenServer(t, line)
	w := s.signIn(alice, "/", http.Header{"Origin": {"https://evil.example"}})
	if w.Code != http.StatusForbidden || len(w.Result().Cookies()) != 0 {
		t.Errorf("a cross-site sign-in: %d with %v, want 403 and no cookie", w.Code, w.Result().Cookies())
	}
}

// The console offers the token sign-in where static tokens are set and
// its sessions hold on every instance: in the shape of one process, or
// with a cookie key file; never in the cloud shape without one, where an
// instance's own key would sign a person out at the next instance. The
// chain's Entry says what a browser may use.
func TestTokenSignInIsOfferedWhereItsSessionsHold(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, line := signin.NewToken(tokenAlice)
	tokens, keys := filepath.Join(dir, "tokens"), filepath.Join(dir, "keys")
	writeFile(t, tokens, line+"\n")
	writeFile(t, keys, signin.NewKey()+"\n")
	for _, c := range []struct {
		name     string
		settings signin.Settings
		want     signin.Entry
	}{
		{"nothing set: the single-user mode", signin.Settings{LocalMode: true}, signin.Entry{Local: true}},
		{"static tokens in one process", signin.Settings{LocalMode: true, OneProcess: true, StaticTokensFile: tokens},
			signin.Entry{Token: signin.TokenSignInPath, SignOut: signin.SignOutPath, Bearer: true}},
		{"static tokens with a key file", signin.Settings{StaticTokensFile: tokens, CookieKeyFile: keys},
			signin.Entry{Token: signin.TokenSignInPath, SignOut: signin.SignOutPath, Bearer: true}},
		{"static tokens in the cloud shape without a key file", signin.Settings{StaticTokensFile: tokens}, signin.Entry{Bearer: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := setup(t, c.settings)
			if got := s.Chain().Entry(); got != c.want {
				t.Errorf("Entry %+v, want %+v", got, c.want)
			}
			w := httptest.NewRecorder()
			s.Mount(http.NotFoundHandler()).ServeHTTP(w, httptest.NewRequest("GET", "http://localhost"+signin.TokenSignInPath, nil))
			if offered := w.Code == http.StatusOK; offered != (c.want.Token != "") {
				t.Errorf("GET %s: %d; want the page: %t", signin.TokenSignInPath, w.Code, c.want.Token != "")
			}
		})
	}
}
