package cloudtaskstest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http/httptest"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/coreos/go-oidc/v3/oidc/oidctest"
)

// Issuer is a test OIDC issuer standing in for accounts.google.com: it
// publishes its public key over HTTP on loopback and signs ID tokens with
// the private one, so a verifier checks them as it would Google's.
type Issuer struct {
	srv  *httptest.Server
	key  *rsa.PrivateKey
	kid  string
	oidc *oidctest.Server
}

// Claims are the claims of an ID token. A zero Issuer is the issuer's own
// URL.
type Claims struct {
	Issuer, Audience, Email string
	EmailVerified           bool
	IssuedAt, Expiry        time.Time
}

// NewIssuer starts an issuer with a fresh RSA key. Close stops it.
func NewIssuer() (*Issuer, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	is := &Issuer{key: key, kid: rand.Text()}
	is.oidc = &oidctest.Server{PublicKeys: []oidctest.PublicKey{{PublicKey: key.Public(), KeyID: is.kid, Algorithm: oidc.RS256}}}
	is.srv = httptest.NewServer(is.oidc)
	is.oidc.SetIssuer(is.srv.URL)
	return is, nil
}

// URL is the issuer's identifier, the iss of its tokens.
func (is *Issuer) URL() string { return is.srv.URL }

// KeysURL is where the issuer publishes its keys (a JWKS).
func (is *Issuer) KeysURL() string { return is.srv.URL + "/keys" }

// Sign returns a signed ID token with c's claims.
func (is *Issuer) Sign(c Claims) string {
	if c.Issuer == "" {
		c.Issuer = is.URL()
	}
	raw, err := json.Marshal(map[string]any{
		"iss": c.Issuer, "aud": c.Audience, "sub": c.Email, "azp": c.Email,
		"email": c.Email, "email_verified": c.EmailVerified,
		"iat": c.IssuedAt.Unix(), "exp": c.Expiry.Unix(),
	})
	if err != nil {
		panic(err) // a map of strings, bools and numbers always encodes
	}
	return oidctest.SignIDToken(is.key, is.kid, oidc.RS256, string(raw))
}

// Token is the token Google would sign for a service account's email and
// audience at now: verified, valid for an hour.
func (is *Issuer) Token(email, audience string, now time.Time) string {
	return is.Sign(Claims{Audience: audience, Email: email, EmailVerified: true, IssuedAt: now, Expiry: now.Add(time.Hour)})
}

// Close stops the issuer's server.
func (is *Issuer) Close() { is.srv.Close() }
