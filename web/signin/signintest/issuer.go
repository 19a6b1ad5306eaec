// Package signintest is an OpenID Connect issuer for tests: discovery,
// keys, an authorize endpoint that approves one fixed user at once, and a
// token endpoint that checks the client's secret, the redirect URL and
// the PKCE verifier (S256) and spends each code once. It signs with
// go-jose, so what it issues is what a real issuer would. Never linked
// into the binary.
package signintest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Options configure an Issuer.
type Options struct {
	// ClientID, ClientSecret and RedirectURL are the one client the
	// issuer knows.
	ClientID, ClientSecret, RedirectURL string
	// Email is the user the authorize endpoint signs in; EmailVerified
	// what it says of the email (nil: the claim is left out).
	Email         string
	EmailVerified *bool
	// Alg signs tokens: jose.RS256 (default) or jose.ES256.
	Alg jose.SignatureAlgorithm
	// Issuer overrides the iss claim of the tokens it issues (default its
	// own URL).
	Issuer string
	// Now is the clock tokens are issued by.
	Now func() time.Time
}

// Issuer is a running test issuer.
type Issuer struct {
	opts   Options
	srv    *httptest.Server
	key    crypto.Signer
	signer jose.Signer
	// KeyID is the id of the key it publishes and signs with.
	KeyID string

	mu    sync.Mutex
	codes map[string]grant
	// Exchanges counts codes exchanged for tokens.
	exchanges int
}

type grant struct {
	challenge, nonce, redirect string
}

// New starts an issuer; Close stops it.
func New(opts Options) *Issuer {
	if opts.Alg == "" {
		opts.Alg = jose.RS256
	}
	is := &Issuer{opts: opts, KeyID: "key-1", codes: map[string]grant{}}
	var err error
	if opts.Alg == jose.ES256 {
		is.key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	} else {
		is.key, err = rsa.GenerateKey(rand.Reader, 2048)
	}
	if err != nil {
		panic(err)
	}
	is.signer, err = jose.NewSigner(jose.SigningKey{Algorithm: opts.Alg, Key: jose.JSONWebKey{Key: is.key, KeyID: is.KeyID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", is.discovery)
	mux.HandleFunc("GET /keys", is.keys)
	mux.HandleFunc("GET /authorize", is.authorize)
	mux.HandleFunc("POST /token", is.token)
	is.srv = httptest.NewServer(mux)
	return is
}

// URL is the issuer's URL.
func (is *Issuer) URL() string { return is.srv.URL }

// KeysURL is where it publishes its keys.
func (is *Issuer) KeysURL() string { return is.srv.URL + "/keys" }

// Close stops it.
func (is *Issuer) Close() { is.srv.Close() }

// PublicKey is the public half of its signing key.
func (is *Issuer) PublicKey() crypto.PublicKey { return is.key.Public() }

// Exchanges is how many codes it has exchanged for tokens.
func (is *Issuer) Exchanges() int {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.exchanges
}

// Sign signs claims with the issuer's published key.
func (is *Issuer) Sign(claims map[string]any) string {
	b, err := json.Marshal(claims)
	if err != nil {
		panic(err)
	}
	sig, err := is.signer.Sign(b)
	if err != nil {
		panic(err)
	}
	s, err := sig.CompactSerialize()
	if err != nil {
		panic(err)
	}
	return s
}

// IDClaims are the claims of an ID token it would issue for email, valid
// for an hour from now.
func (is *Issuer) IDClaims(email string, now time.Time) map[string]any {
	iss := is.opts.Issuer
	if iss == "" {
		iss = is.srv.URL
	}
	c := map[string]any{
		"iss": iss, "aud": is.opts.ClientID, "sub": "sub-" + email, "email": email,
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}
	if is.opts.EmailVerified != nil {
		c["email_verified"] = *is.opts.EmailVerified
	}
	return c
}

func (is *Issuer) discovery(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                is.srv.URL,
		"authorization_endpoint":                is.srv.URL + "/authorize",
		"token_endpoint":                        is.srv.URL + "/token",
		"jwks_uri":                              is.KeysURL(),
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{string(is.opts.Alg)},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
	})
}

func (is *Issuer) keys(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: is.key.Public(), KeyID: is.KeyID, Algorithm: string(is.opts.Alg), Use: "sig"},
	}})
}

// authorize approves is.opts.Email at once and sends the browser back
// with a code and the state, as a real issuer does once the user agrees.
func (is *Issuer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	switch {
	case q.Get("response_type") != "code":
		http.Error(w, "response_type: want code", http.StatusBadRequest)
		return
	case q.Get("client_id") != is.opts.ClientID:
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	case q.Get("redirect_uri") != is.opts.RedirectURL:
		http.Error(w, "redirect_uri not registered for the client", http.StatusBadRequest)
		return
	case q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		http.Error(w, "PKCE with S256 required", http.StatusBadRequest)
		return
	case q.Get("state") == "":
		http.Error(w, "state required", http.StatusBadRequest)
		return
	}
	code := rand.Text()
	is.mu.Lock()
	is.codes[code] = grant{challenge: q.Get("code_challenge"), nonce: q.Get("nonce"), redirect: q.Get("redirect_uri")}
	is.mu.Unlock()
	back, _ := url.Parse(is.opts.RedirectURL)
	back.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}}.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// token exchanges a code: the client must authenticate, name the same
// redirect URL, and send the verifier whose S256 hash is the challenge.
// A code is spent by a successful exchange only.
func (is *Issuer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	id, secret, ok := r.BasicAuth()
	if ok {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != is.opts.ClientID || subtle.ConstantTimeCompare([]byte(secret), []byte(is.opts.ClientSecret)) != 1 {
		tokenError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	if r.PostForm.Get("grant_type") != "authorization_code" {
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type", "want authorization_code")
		return
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	code := r.PostForm.Get("code")
	g, ok := is.codes[code]
	if !ok {
		tokenError(w, http.StatusBadRequest, "invalid_grant", "unknown or spent code")
		return
	}
	if r.PostForm.Get("redirect_uri") != g.redirect {
		tokenError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request's")
		return
	}
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	if r.PostForm.Get("code_verifier") == "" || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
		tokenError(w, http.StatusBadRequest, "invalid_grant", "PKCE verifier does not match the challenge")
		return
	}
	delete(is.codes, code)
	is.exchanges++
	claims := is.IDClaims(is.opts.Email, is.opts.Now())
	if g.nonce != "" {
		claims["nonce"] = g.nonce
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": rand.Text(), "token_type": "Bearer", "expires_in": 3600, "id_token": is.Sign(claims),
	})
}

func tokenError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		panic(fmt.Sprint("signintest: ", err))
	}
}
