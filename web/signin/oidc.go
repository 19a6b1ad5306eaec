package signin

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/sundial-cron/sundial/access"
)

// Paths of the sign-in flow's handlers, under which OIDC.Handler serves.
const (
	SignInPath   = "/auth/signin"
	CallbackPath = "/auth/callback"
	SignOutPath  = "/auth/signout"
)

// Cookie names, and the purposes their values are sealed for. With
// Secure cookies the names carry the __Host- prefix, which browsers
// honour only for a cookie set by this very host over https with no
// Domain and Path=/: a sibling subdomain cannot plant its own session
// (even a valid one of its user's) in this server's browsers.
const (
	// SessionCookie is the session cookie's name (with __Host- when
	// Secure).
	SessionCookie = "sundial_session"
	stateCookie   = "sundial_signin"
)

// name is the cookie's name as set: with the __Host- prefix when Secure.
func (o *OIDC) name(cookie string) string {
	if o.secure {
		return "__Host-" + cookie
	}
	return cookie
}

// DefaultSessionTTL is how long a session lasts from sign-in, whatever is
// done with it: an absolute expiry, not a sliding one.
const DefaultSessionTTL = 12 * time.Hour

// stateTTL is how long a browser has from leaving for the issuer to
// coming back.
const stateTTL = 10 * time.Minute

// OIDCOptions configure sign-in with an OpenID Connect issuer.
type OIDCOptions struct {
	// Issuer is the issuer's URL, as its discovery document and its ID
	// tokens name it (https://accounts.google.com). Required.
	Issuer string
	// ClientID and ClientSecret are the OAuth client registered with the
	// issuer for this server. The client id is the audience ID tokens
	// must name. Required (the secret may be empty for a public client).
	ClientID, ClientSecret string
	// RedirectURL is the callback the issuer sends the browser back to:
	// the server's public URL and CallbackPath
	// (https://sundial.example.com/auth/callback). Required.
	RedirectURL string
	// Scopes asked for; default openid and email.
	Scopes []string
	// Keys seal the session and sign-in cookies. Required.
	Keys *Sealer
	// Revocations lists the sessions ended by sign-out and the sign-in
	// states used. Required.
	Revocations Revocations
	// SessionTTL is a session's absolute lifetime; default
	// DefaultSessionTTL.
	SessionTTL time.Duration
	// InsecureCookies leaves the Secure attribute off the cookies, for
	// development over http://localhost only: refused for any other
	// RedirectURL.
	InsecureCookies bool
	// Now is the clock. Required.
	Now func() time.Time
	// Client fetches the issuer's discovery document and keys and
	// exchanges codes; default http.DefaultClient.
	Client *http.Client
	// Logger logs refused sign-ins; default slog.Default().
	Logger *slog.Logger
}

// OIDC signs people in with an OpenID Connect issuer (authorization code
// flow with PKCE, state and nonce) and authenticates their session
// cookies.
type OIDC struct {
	opts     OIDCOptions
	oauth    oauth2.Config
	verifier *oidc.IDTokenVerifier
	secure   bool
}

// NewOIDC reads the issuer's discovery document and returns the sign-in
// flow.
func NewOIDC(ctx context.Context, opts OIDCOptions) (*OIDC, error) {
	switch {
	case opts.Issuer == "":
		return nil, errors.New("oidc sign-in: issuer: missing")
	case opts.ClientID == "":
		return nil, errors.New("oidc sign-in: client id: missing")
	case opts.Keys == nil:
		return nil, errors.New("oidc sign-in: cookie keys: missing")
	case opts.Revocations == nil:
		return nil, errors.New("oidc sign-in: revocations: missing")
	case opts.Now == nil:
		return nil, errors.New("oidc sign-in: Now: missing")
	}
	cb, err := url.Parse(opts.RedirectURL)
	if err != nil || cb.Host == "" || (cb.Scheme != "https" && cb.Scheme != "http") {
		return nil, fmt.Errorf("oidc sign-in: redirect URL %q: want an absolute http(s) URL ending in %s", opts.RedirectURL, CallbackPath)
	}
	if cb.Path != CallbackPath {
		return nil, fmt.Errorf("oidc sign-in: redirect URL %q: its path must be %s", opts.RedirectURL, CallbackPath)
	}
	if opts.InsecureCookies && (cb.Scheme != "http" || !loopbackHost(cb.Hostname())) {
		return nil, fmt.Errorf("oidc sign-in: insecure cookies are only for development at http://localhost, not %s", opts.RedirectURL)
	}
	if cb.Scheme == "http" && !opts.InsecureCookies {
		return nil, fmt.Errorf("oidc sign-in: redirect URL %s is plain http: browsers drop Secure cookies there (for development at localhost, ask for insecure cookies)", opts.RedirectURL)
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = DefaultSessionTTL
	}
	if len(opts.Scopes) == 0 {
		opts.Scopes = []string{oidc.ScopeOpenID, "email"}
	}
	if opts.Client == nil {
		opts.Client = http.DefaultClient
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	provider, err := oidc.NewProvider(oidc.ClientContext(ctx, opts.Client), opts.Issuer)
	if err != nil {
		return nil, fmt.Errorf("oidc sign-in: issuer %s: %w", opts.Issuer, err)
	}
	return &OIDC{
		opts: opts,
		oauth: oauth2.Config{
			ClientID: opts.ClientID, ClientSecret: opts.ClientSecret,
			Endpoint: provider.Endpoint(), RedirectURL: opts.RedirectURL, Scopes: opts.Scopes,
		},
		verifier: provider.VerifierContext(oidc.ClientContext(context.Background(), opts.Client),
			&oidc.Config{ClientID: opts.ClientID, Now: opts.Now}),
		secure: !opts.InsecureCookies,
	}, nil
}

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Handler serves SignInPath, CallbackPath and SignOutPath: mount it at
// "/auth/".
func (o *OIDC) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+SignInPath, o.SignIn())
	mux.Handle("GET "+CallbackPath, o.Callback())
	// Sign-out changes state, so a page of another site must not be able
	// to post it.
	mux.Handle("POST "+SignOutPath, http.NewCrossOriginProtection().Handler(o.SignOut()))
	return mux
}

// flowState is what the sign-in cookie carries from SignIn to Callback.
type flowState struct {
	State    string    `json:"s"`
	Nonce    string    `json:"n"`
	Verifier string    `json:"v"`
	Next     string    `json:"r"`
	Expires  time.Time `json:"e"`
}

// session is what the session cookie carries.
type session struct {
	ID      string    `json:"i"`
	Email   string    `json:"m"`
	Issued  time.Time `json:"t"`
	Expires time.Time `json:"e"`
}

// SignIn starts the flow (GET SignInPath?next=/path): it sets a short-lived
// sealed cookie holding a fresh state, nonce and PKCE verifier and
// redirects to the issuer. next, where the browser lands after, must be a
// path on this server; anything else lands on "/".
func (o *OIDC) SignIn() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fs := flowState{
			State: rand.Text(), Nonce: rand.Text(), Verifier: oauth2.GenerateVerifier(),
			Next: localPath(r.URL.Query().Get("next")), Expires: o.opts.Now().Add(stateTTL),
		}
		b, _ := json.Marshal(fs)
		http.SetCookie(w, o.cookie(stateCookie, o.opts.Keys.Seal(stateCookie, b), stateTTL))
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, o.oauth.AuthCodeURL(fs.State, oidc.Nonce(fs.Nonce), oauth2.S256ChallengeOption(fs.Verifier)), http.StatusFound)
	})
}

// Callback ends the flow (GET CallbackPath?code=...&state=...): the state
// must be the one this browser's sign-in cookie holds, unexpired and
// unused; the code is exchanged with the PKCE verifier; the ID token must
// be the issuer's, for this client, unexpired, with the nonce, and for a
// verified email. It then sets the session cookie and redirects to next.
func (o *OIDC) Callback() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		// The sign-in cookie is spent whatever happens next.
		http.SetCookie(w, o.cookie(stateCookie, "", 0))
		email, next, err := o.callback(r)
		if err != nil {
			o.opts.Logger.Warn("sign-in refused", "err", err, "remote", r.RemoteAddr)
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "sign-in refused: " + err.Error()})
			return
		}
		now := o.opts.Now()
		s := session{ID: rand.Text(), Email: email, Issued: now, Expires: now.Add(o.opts.SessionTTL)}
		b, _ := json.Marshal(s)
		http.SetCookie(w, o.cookie(SessionCookie, o.opts.Keys.Seal(SessionCookie, b), o.opts.SessionTTL))
		o.opts.Logger.Info("signed in", "identity", access.User(email), "session_expires", s.Expires)
		http.Redirect(w, r, next, http.StatusSeeOther)
	})
}

func (o *OIDC) callback(r *http.Request) (email, next string, err error) {
	ctx := r.Context()
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		return "", "", fmt.Errorf("the issuer answered %s: %s", e, q.Get("error_description"))
	}
	c, err := r.Cookie(o.name(stateCookie))
	if err != nil {
		return "", "", errors.New("no sign-in cookie: sign-in was not started in this browser, or took too long")
	}
	raw, err := o.opts.Keys.Open(stateCookie, c.Value)
	if err != nil {
		return "", "", err
	}
	var fs flowState
	if err := json.Unmarshal(raw, &fs); err != nil {
		return "", "", fmt.Errorf("sign-in cookie: %w", err)
	}
	now := o.opts.Now()
	switch {
	case q.Get("state") == "" || q.Get("state") != fs.State:
		return "", "", errors.New("state does not match this browser's sign-in")
	case !now.Before(fs.Expires):
		return "", "", errors.New("sign-in took too long: start again")
	}
	revoked, err := o.opts.Revocations.Revoked(ctx, "state:"+fs.State)
	if err != nil {
		return "", "", fmt.Errorf("checking the state: %w", err)
	}
	if revoked {
		return "", "", errors.New("state already used")
	}
	// Spent before the exchange, so that a replay racing this request
	// finds it spent.
	if err := o.opts.Revocations.Revoke(ctx, "state:"+fs.State, fs.Expires); err != nil {
		return "", "", fmt.Errorf("spending the state: %w", err)
	}
	tok, err := o.oauth.Exchange(oidc.ClientContext(ctx, o.opts.Client), q.Get("code"), oauth2.VerifierOption(fs.Verifier))
	if err != nil {
		return "", "", fmt.Errorf("exchanging the code: %w", err)
	}
	rawID, _ := tok.Extra("id_token").(string)
	if rawID == "" {
		return "", "", errors.New("the issuer's answer holds no ID token")
	}
	idt, err := o.verifier.Verify(ctx, rawID)
	if err != nil {
		return "", "", fmt.Errorf("ID token: %w", err)
	}
	if idt.Nonce != fs.Nonce {
		return "", "", errors.New("ID token: nonce does not match this sign-in")
	}
	var claims struct {
		Email    string `json:"email"`
		Verified *bool  `json:"email_verified"`
	}
	if err := idt.Claims(&claims); err != nil {
		return "", "", fmt.Errorf("ID token claims: %w", err)
	}
	if claims.Email == "" {
		return "", "", errors.New("ID token names no email: ask for the email scope")
	}
	if claims.Verified != nil && !*claims.Verified {
		return "", "", fmt.Errorf("ID token: the issuer has not verified %s", claims.Email)
	}
	if _, err := access.ParseIdentity(string(access.User(claims.Email))); err != nil {
		return "", "", fmt.Errorf("ID token: %w", err)
	}
	return claims.Email, fs.Next, nil
}

// SignOut ends the session (POST SignOutPath): its id is revoked until it
// would have expired, so the cookie is refused even if replayed, and the
// cookie is cleared. It redirects to "/".
func (o *OIDC) SignOut() http.Handler { return signOut(o.end) }

// end ends the request's OIDC session, if it has one, and clears its
// cookie.
func (o *OIDC) end(w http.ResponseWriter, r *http.Request) error {
	if c, err := r.Cookie(o.name(SessionCookie)); err == nil {
		if s, err := o.session(c.Value); err == nil {
			if err := o.opts.Revocations.Revoke(r.Context(), "session:"+s.ID, s.Expires); err != nil {
				return err
			}
			o.opts.Logger.Info("signed out", "identity", access.User(s.Email))
		}
	}
	http.SetCookie(w, o.cookie(SessionCookie, "", 0))
	return nil
}

// signOut ends every session the request holds, each by its own end, and
// redirects to "/". A session that cannot be ended is a 503: the person
// must not believe it ended.
func signOut(ends ...func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		for _, end := range ends {
			if err := end(w, r); err != nil {
				writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "sign-out failed, the session is still valid: " + err.Error()})
				return
			}
		}
		http.Redirect(w, r, "/", http.StatusSeeOther)
	})
}

// Authenticate implements Authenticator over the session cookie.
func (o *OIDC) Authenticate(r *http.Request) (access.Identity, error) {
	c, err := r.Cookie(o.name(SessionCookie))
	if err != nil || c.Value == "" {
		return access.Anonymous, nil
	}
	s, err := o.session(c.Value)
	if err != nil {
		return access.Anonymous, err
	}
	revoked, err := o.opts.Revocations.Revoked(r.Context(), "session:"+s.ID)
	if err != nil {
		return access.Anonymous, fmt.Errorf("session: checking revocation: %w", err)
	}
	if revoked {
		return access.Anonymous, errors.New("session ended by sign-out: sign in again")
	}
	return access.User(s.Email), nil
}

func (o *OIDC) session(value string) (session, error) {
	var s session
	raw, err := o.opts.Keys.Open(SessionCookie, value)
	if err != nil {
		return s, fmt.Errorf("session: %w", err)
	}
	if err := json.Unmarshal(raw, &s); err != nil || s.ID == "" || s.Email == "" {
		return s, errors.New("session: malformed")
	}
	if !o.opts.Now().Before(s.Expires) {
		return s, errors.New("session expired: sign in again")
	}
	return s, nil
}

// cookie is a cookie of the flow: HttpOnly, SameSite=Lax (it must come
// along on the issuer's top-level redirect back, and on links into the
// console), Secure unless insecure cookies were asked for. Its lifetime
// is relative (Max-Age), so the browser's clock need not agree with the
// server's; the sealed value carries the expiry the server enforces. A
// zero lifetime deletes it.
func (o *OIDC) cookie(name, value string, lifetime time.Duration) *http.Cookie {
	c := &http.Cookie{Name: o.name(name), Value: value, Path: "/", HttpOnly: true, Secure: o.secure, SameSite: http.SameSiteLaxMode, MaxAge: -1}
	if lifetime > 0 {
		c.MaxAge = int(lifetime.Seconds())
	}
	return c
}

// localPath returns next if it is a path on this server, else "/": never
// another origin ("//evil.example", "/\evil.example", "https://...").
func localPath(next string) string {
	if next == "" || next[0] != '/' || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n\t") {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return "/"
	}
	return next
}
