package signin

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/access"
)

// TokenSignInPath is the console's sign-in with a static token: GET shows
// the form, POST signs in.
const TokenSignInPath = "/auth/token"

// TokenSessionCookie is the name of the session cookie the token sign-in
// sets, with the __Host- prefix when it is Secure.
const TokenSessionCookie = "sundial_token_session"

// TokenSignInOptions configure the console's sign-in with static tokens.
type TokenSignInOptions struct {
	// Tokens are the static tokens a person may sign in with: the API's
	// own (--static-tokens-file). Required.
	Tokens *StaticTokens
	// Keys seal the session cookie. Required.
	Keys *Sealer
	// Revocations lists the sessions ended by sign-out. Required.
	Revocations Revocations
	// SessionTTL is a session's absolute lifetime; default
	// DefaultSessionTTL.
	SessionTTL time.Duration
	// Now is the clock. Required.
	Now func() time.Time
	// Logger logs sign-ins and refusals; default slog.Default().
	Logger *slog.Logger
}

// TokenSignIn lets a person sign in to the console with a static token,
// for teams without an identity provider. The token is checked as the
// API checks a bearer token, and the session cookie holds, sealed, the
// token's hash and identity, never the token: every request looks the hash
// up in the token file again, so a token taken out of the file (at the
// restart that reads it) ends its sessions at their next request. Roles
// are the identity's, as for the token on the API.
type TokenSignIn struct {
	opts TokenSignInOptions
}

// NewTokenSignIn returns the token sign-in.
func NewTokenSignIn(opts TokenSignInOptions) (*TokenSignIn, error) {
	switch {
	case opts.Tokens == nil:
		return nil, errors.New("token sign-in: tokens: missing")
	case opts.Keys == nil:
		return nil, errors.New("token sign-in: cookie keys: missing")
	case opts.Revocations == nil:
		return nil, errors.New("token sign-in: revocations: missing")
	case opts.Now == nil:
		return nil, errors.New("token sign-in: Now: missing")
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = DefaultSessionTTL
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &TokenSignIn{opts: opts}, nil
}

// tokenSession is what the token session cookie carries.
type tokenSession struct {
	ID       string          `json:"i"`
	Sum      []byte          `json:"h"` // the token's SHA-256, as the token file holds it
	Identity access.Identity `json:"m"`
	Issued   time.Time       `json:"t"`
	Expires  time.Time       `json:"e"`
}

// maxTokenForm bounds the sign-in form: a token and a path.
const maxTokenForm = 8 << 10

// Handler serves TokenSignInPath: the form, and the sign-in it posts,
// which a page of another site may not post (it would sign the browser in
// as someone else).
func (t *TokenSignIn) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+TokenSignInPath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.form(w, r, http.StatusOK, localPath(r.URL.Query().Get("next")), "")
	}))
	mux.Handle("POST "+TokenSignInPath, http.NewCrossOriginProtection().Handler(http.HandlerFunc(t.signIn)))
	return mux
}

// signIn checks the token posted and, if the token file knows it, sets
// the session cookie and sends the browser on to next.
func (t *TokenSignIn) signIn(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxTokenForm)
	if err := r.ParseForm(); err != nil {
		t.form(w, r, http.StatusBadRequest, "/", "the form: "+err.Error())
		return
	}
	next := localPath(r.PostFormValue("next"))
	if !private(r) {
		t.opts.Logger.Warn("token sign-in refused: plain http", "host", r.Host, "remote", r.RemoteAddr)
		t.form(w, r, http.StatusForbidden, next, "refused: this page came over plain http, so the token crossed the network in clear; "+
			"the server takes tokens typed here only over https (revoke the token if the network is not yours)")
		return
	}
	token := strings.TrimSpace(r.PostFormValue("token"))
	if token == "" {
		t.form(w, r, http.StatusBadRequest, next, "paste a token")
		return
	}
	id, sum, err := t.opts.Tokens.check(token)
	if err != nil {
		t.opts.Logger.Warn("token sign-in refused", "remote", r.RemoteAddr, "reason", err.Error())
		t.form(w, r, http.StatusUnauthorized, next, "sign-in refused: "+err.Error())
		return
	}
	now := t.opts.Now()
	s := tokenSession{ID: rand.Text(), Sum: sum[:], Identity: id, Issued: now, Expires: now.Add(t.opts.SessionTTL)}
	b, _ := json.Marshal(s)
	http.SetCookie(w, t.cookie(r, t.opts.Keys.Seal(TokenSessionCookie, b), t.opts.SessionTTL))
	t.opts.Logger.Info("signed in with a token", "identity", id, "session_expires", s.Expires, "remote", r.RemoteAddr)
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// Authenticate implements Authenticator over the session cookie. A
// session is refused once it has expired, been ended by sign-out, or its
// token is no longer in the token file, or maps to another identity.
func (t *TokenSignIn) Authenticate(r *http.Request) (access.Identity, error) {
	c, err := r.Cookie(cookieName(r, TokenSessionCookie))
	if err != nil || c.Value == "" {
		return access.Anonymous, nil
	}
	s, err := t.session(c.Value)
	if err != nil {
		return access.Anonymous, err
	}
	revoked, err := t.opts.Revocations.Revoked(r.Context(), "session:"+s.ID)
	if err != nil {
		return access.Anonymous, fmt.Errorf("token session: checking revocation: %w", err)
	}
	if revoked {
		return access.Anonymous, errors.New("token session ended by sign-out: sign in again")
	}
	id, ok := t.opts.Tokens.identity([sha256.Size]byte(s.Sum))
	if !ok || id != s.Identity {
		return access.Anonymous, errors.New("token session: the token it was signed in with is no longer accepted by this server: sign in with another")
	}
	return id, nil
}

func (t *TokenSignIn) session(value string) (tokenSession, error) {
	var s tokenSession
	raw, err := t.opts.Keys.Open(TokenSessionCookie, value)
	if err != nil {
		return s, fmt.Errorf("token session: %w", err)
	}
	if err := json.Unmarshal(raw, &s); err != nil || s.ID == "" || len(s.Sum) != sha256.Size || s.Identity == "" {
		return s, errors.New("token session: malformed")
	}
	if !t.opts.Now().Before(s.Expires) {
		return s, errors.New("token session expired: sign in again")
	}
	return s, nil
}

// end ends the request's token session, if it has one: its id is revoked
// until it would have expired, so a copy of the cookie is refused too,
// and the cookie is cleared. A cookie that no longer opens is cleared
// alone.
func (t *TokenSignIn) end(w http.ResponseWriter, r *http.Request) error {
	c, err := r.Cookie(cookieName(r, TokenSessionCookie))
	if err != nil {
		return nil
	}
	if s, err := t.session(c.Value); err == nil {
		if err := t.opts.Revocations.Revoke(r.Context(), "session:"+s.ID, s.Expires); err != nil {
			return err
		}
		t.opts.Logger.Info("signed out", "identity", s.Identity)
	}
	http.SetCookie(w, t.cookie(r, "", 0))
	return nil
}

// cookie is the session cookie: HttpOnly, SameSite=Lax (it must come
// along on links into the console), Secure and __Host- when the browser
// reached the server over https. Only a browser at a loopback address
// gets it over plain http (private): there the connection never leaves
// the machine, and a Secure cookie would not be kept. Its lifetime is
// relative (Max-Age); the sealed value carries the expiry the server
// enforces. A zero lifetime deletes it.
func (t *TokenSignIn) cookie(r *http.Request, value string, lifetime time.Duration) *http.Cookie {
	c := &http.Cookie{Name: cookieName(r, TokenSessionCookie), Value: value, Path: "/", HttpOnly: true,
		Secure: overHTTPS(r), SameSite: http.SameSiteLaxMode, MaxAge: -1}
	if lifetime > 0 {
		c.MaxAge = int(lifetime.Seconds())
	}
	return c
}

// cookieName is a cookie's name for r: with the __Host- prefix over
// https, which browsers honour only for a Secure cookie set by this very
// host with Path=/, so a sibling subdomain cannot plant one.
func cookieName(r *http.Request, name string) string {
	if overHTTPS(r) {
		return "__Host-" + name
	}
	return name
}

// overHTTPS reports whether the browser reached the server over https:
// TLS on this connection, or a proxy in front that ended TLS and says so
// in X-Forwarded-Proto or Forwarded. The headers are trusted for this
// alone: a client that sends them over plain http gets a Secure cookie
// its browser will not keep.
func overHTTPS(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	// Each proxy appends: the first value is the one the browser used.
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	if strings.EqualFold(strings.TrimSpace(proto), "https") {
		return true
	}
	first, _, _ := strings.Cut(r.Header.Get("Forwarded"), ",")
	for _, pair := range strings.Split(first, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(pair), "=")
		if strings.EqualFold(k, "proto") && strings.EqualFold(strings.Trim(v, `"`), "https") {
			return true
		}
	}
	return false
}

// private reports whether a token typed into the page reaches the server
// unread by the network: over https, or over plain http to a loopback
// address, as the CLI sends a token only over https or to this machine.
func private(r *http.Request) bool {
	if overHTTPS(r) {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return loopbackHost(strings.Trim(host, "[]"))
}

//go:embed token.html
var tokenPageHTML string

var tokenPage = template.Must(template.New("token").Parse(tokenPageHTML))

// pagePolicy is the sign-in page's Content-Security-Policy: it loads the
// console's stylesheet and nothing else, runs no script, and posts only
// to this server.
const pagePolicy = "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// tokenForm is what the sign-in page shows.
type tokenForm struct {
	Action, Next string
	Error        string
	// Plain: the page came over plain http from afar, where it offers no
	// form.
	Plain bool
	TTL   string
}

// form writes the sign-in page with an error, if any.
func (t *TokenSignIn) form(w http.ResponseWriter, r *http.Request, status int, next, errMsg string) {
	f := tokenForm{Action: TokenSignInPath, Next: next, Error: errMsg, Plain: !private(r), TTL: lifetime(t.opts.SessionTTL)}
	var buf bytes.Buffer
	if err := tokenPage.Execute(&buf, f); err != nil {
		http.Error(w, "the sign-in page failed to render", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", pagePolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// lifetime writes a session's lifetime as a person reads it.
func lifetime(d time.Duration) string {
	switch {
	case d%time.Hour == 0 && d == time.Hour:
		return "1 hour"
	case d%time.Hour == 0:
		return fmt.Sprintf("%d hours", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	return d.String()
}
