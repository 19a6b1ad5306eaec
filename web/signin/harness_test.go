package signin_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/internal/fakeclock"
	"github.com/sundial-cron/sundial/web/signin"
	"github.com/sundial-cron/sundial/web/signin/signintest"
)

// t0 is where every test's clock starts.
var t0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

const (
	clientID     = "sundial-test-client"
	clientSecret = "client-secret-for-tests"
	alice        = "alice@example.com"
)

// site is a server with the sign-in flow and whoami mounted, its issuer,
// and its clock.
type site struct {
	t      *testing.T
	clk    *fakeclock.Clock
	is     *signintest.Issuer
	oidc   *signin.OIDC
	srv    *httptest.Server
	keys   *signin.Sealer
	revoke signin.Revocations
}

type siteOptions struct {
	verified *bool // the issuer's email_verified claim; default true
	// revocations: default an in-memory list.
	revocations signin.Revocations
}

func newSite(t *testing.T, so siteOptions) *site {
	t.Helper()
	s := &site{t: t, clk: fakeclock.New(t0)}
	mux := http.NewServeMux()
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	verified := so.verified
	if verified == nil {
		verified = new(bool)
		*verified = true
	}
	s.is = signintest.New(signintest.Options{
		ClientID: clientID, ClientSecret: clientSecret, RedirectURL: s.srv.URL + signin.CallbackPath,
		Email: alice, EmailVerified: verified, Now: s.clk.Now,
	})
	t.Cleanup(s.is.Close)
	var err error
	s.keys, err = signin.NewSealer([]byte(strings.Repeat("k", signin.KeyLen)))
	if err != nil {
		t.Fatal(err)
	}
	s.revoke = so.revocations
	if s.revoke == nil {
		s.revoke = signin.NewMemory(s.clk.Now)
	}
	s.oidc = s.instance(s.revoke)
	mux.Handle("/auth/", s.oidc.Handler())
	mux.Handle("GET /api/v1/whoami", whoAmI(s.oidc))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "home") })
	mux.HandleFunc("GET /console/jobs", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "jobs") })
	return s
}

// instance is the sign-in flow of one server instance over the given
// revocation list, with the site's keys and issuer.
func (s *site) instance(rev signin.Revocations) *signin.OIDC {
	o, err := signin.NewOIDC(context.Background(), signin.OIDCOptions{
		Issuer: s.is.URL(), ClientID: clientID, ClientSecret: clientSecret,
		RedirectURL: s.srv.URL + signin.CallbackPath, Keys: s.keys, Revocations: rev,
		InsecureCookies: true, Now: s.clk.Now, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return o
}

// browser is an HTTP client with its own cookie jar that does not follow
// redirects by itself, so each step of the flow can be looked at.
type browser struct {
	t      *testing.T
	client *http.Client
}

func (s *site) browser() *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		s.t.Fatal(err)
	}
	return &browser{t: s.t, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// get fetches u and returns the response with its body read.
func (b *browser) get(u string) (*http.Response, string) {
	b.t.Helper()
	resp, err := b.client.Get(u)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// startSignIn visits the sign-in URL and follows the issuer's approval,
// returning the callback URL the issuer sends the browser back to.
func (b *browser) startSignIn(s *site, next string) string {
	b.t.Helper()
	resp, _ := b.get(s.srv.URL + signin.SignInPath + "?next=" + url.QueryEscape(next))
	if resp.StatusCode != http.StatusFound {
		b.t.Fatalf("sign-in start: %s", resp.Status)
	}
	resp, body := b.get(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound {
		b.t.Fatalf("issuer's authorize: %s: %s", resp.Status, body)
	}
	return resp.Header.Get("Location")
}

// signIn runs the whole flow and returns where it landed.
func (b *browser) signIn(s *site, next string) string {
	b.t.Helper()
	resp, body := b.get(b.startSignIn(s, next))
	if resp.StatusCode != http.StatusSeeOther {
		b.t.Fatalf("callback: %s: %s", resp.Status, body)
	}
	return resp.Header.Get("Location")
}

// whoami returns the status and the identity or error whoami answers.
func (b *browser) whoami(s *site) (int, string) {
	b.t.Helper()
	resp, body := b.get(s.srv.URL + "/api/v1/whoami")
	var v struct{ Identity, Error string }
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		b.t.Fatalf("whoami: %v: %s", err, body)
	}
	if resp.StatusCode == http.StatusOK {
		return resp.StatusCode, v.Identity
	}
	return resp.StatusCode, v.Error
}

func (b *browser) cookie(s *site, name string) *http.Cookie {
	u, _ := url.Parse(s.srv.URL)
	for _, c := range b.client.Jar.Cookies(u) {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// whoAmI answers {"identity": "..."}: who auth says the caller is, as the
// API's /whoami does; failed credentials answer 401.
func whoAmI(auth signin.Authenticator) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		id, err := auth.Authenticate(r)
		if err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"identity": string(id)})
	})
}
