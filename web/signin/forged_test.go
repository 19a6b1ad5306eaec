package signin_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/web/signin"
	"github.com/sundial-cron/sundial/web/signin/signintest"
)

const (
	iapAudience = "/projects/123456789/apps/sundial-test"
	saAudience  = "https://sundial.example.com"
	ciAccount   = "ci@proj.iam.gserviceaccount.com"
)

// credential is one kind of signed credential under test: its issuer,
// good claims for it, and how a request carries it.
type credential struct {
	name   string
	is     *signintest.Issuer
	auth   signin.Authenticator
	claims func() map[string]any
	carry  func(r *http.Request, token string)
	want   access.Identity
}

func credentials(t *testing.T) []credential {
	t.Helper()
	clock := func() time.Time { return t0 }
	iapIs := signintest.New(signintest.Options{Alg: jose.ES256, ClientID: iapAudience, Issuer: signin.IAPIssuer, Now: clock})
	t.Cleanup(iapIs.Close)
	iap, err := signin.NewIAP(signin.IAPOptions{Audience: iapAudience, KeysURL: iapIs.KeysURL(), Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	googleIs := signintest.New(signintest.Options{ClientID: saAudience, Now: clock})
	t.Cleanup(googleIs.Close)
	ids, err := signin.NewIDTokens(signin.IDTokenOptions{Audience: saAudience, Issuer: googleIs.URL(), KeysURL: googleIs.KeysURL(), Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	return []credential{
		{
			name: "IAP", is: iapIs, auth: iap,
			claims: func() map[string]any { return iapIs.IDClaims(alice, t0) },
			carry:  func(r *http.Request, tok string) { r.Header.Set(signin.IAPHeader, tok) },
			want:   access.User(alice),
		},
		{
			name: "service account ID token", is: googleIs, auth: ids,
			claims: func() map[string]any {
				c := googleIs.IDClaims(ciAccount, t0)
				c["email_verified"] = true
				return c
			},
			carry: func(r *http.Request, tok string) { r.Header.Set("Authorization", "Bearer "+tok) },
			want:  access.ServiceAccount(ciAccount),
		},
	}
}

func (c credential) authenticate(token string) (access.Identity, error) {
	r, _ := http.NewRequest("GET", "/api/v1/whoami", nil)
	c.carry(r, token)
	return c.auth.Authenticate(r)
}

// refused checks that a forged credential is refused, after checking that
// the genuine one is taken, so that a refusal is the forgery's doing.
func refused(t *testing.T, forge func(c credential) string) {
	t.Helper()
	for _, c := range credentials(t) {
		if id, err := c.authenticate(c.is.Sign(c.claims())); err != nil || id != c.want {
			t.Fatalf("%s: the genuine credential = %q, %v; want %q", c.name, id, err, c.want)
		}
		if id, err := c.authenticate(forge(c)); err == nil {
			t.Errorf("%s: the forged credential authenticated as %q", c.name, id)
		}
	}
}

func TestForgedExpiredIsRefused(t *testing.T) {
	t.Parallel()
	refused(t, func(c credential) string {
		cl := c.claims()
		cl["iat"], cl["exp"] = t0.Add(-2*time.Hour).Unix(), t0.Add(-signin.Leeway-time.Second).Unix()
		return c.is.Sign(cl)
	})
}

func TestForgedIssuedInTheFutureIsRefused(t *testing.T) {
	t.Parallel()
	refused(t, func(c credential) string {
		cl := c.claims()
		cl["iat"], cl["exp"] = t0.Add(signin.Leeway+time.Minute).Unix(), t0.Add(time.Hour).Unix()
		return c.is.Sign(cl)
	})
}

func TestForgedWrongAudienceIsRefused(t *testing.T) {
	t.Parallel()
	refused(t, func(c credential) string {
		cl := c.claims()
		cl["aud"] = "/projects/999/apps/another-app"
		return c.is.Sign(cl)
	})
}

func TestForgedWrongIssuerIsRefused(t *testing.T) {
	t.Parallel()
	refused(t, func(c credential) string {
		cl := c.claims()
		cl["iss"] = "https://issuer.example.com"
		return c.is.Sign(cl)
	})
}

func TestForgedAlgNoneIsRefused(t *testing.T) {
	t.Parallel()
	refused(t, func(c credential) string {
		return unsigned(map[string]any{"alg": "none", "typ": "JWT", "kid": c.is.KeyID}, c.claims(), nil)
	})
}

// The classic confusion: HS256 with the issuer's public key as the HMAC
// secret, which a verifier that lets the token pick its algorithm takes.
func TestForgedHS256WithThePublicKeyIsRefused(t *testing.T) {
	t.Parallel()
	refused(t, func(c credential) string {
		der, err := x509.MarshalPKIXPublicKey(c.is.PublicKey())
		if err != nil {
			t.Fatal(err)
		}
		pub := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
		return unsigned(map[string]any{"alg": "HS256", "typ": "JWT", "kid": c.is.KeyID}, c.claims(), func(in []byte) []byte {
			m := hmac.New(sha256.New, pub)
			m.Write(in)
			return m.Sum(nil)
		})
	})
}

func TestForgedUnpublishedKeyIsRefused(t *testing.T) {
	t.Parallel()
	refused(t, func(c credential) string {
		var key any
		alg := jose.RS256
		if c.name == "IAP" {
			key, alg = must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader)), jose.ES256
		} else {
			key = must(rsa.GenerateKey(rand.Reader, 2048))
		}
		s := must(jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: "not-published"}}, nil))
		return must(must(s.Sign(must(json.Marshal(c.claims())))).CompactSerialize())
	})
}

// Signed with the published key but under its id, a key of the forger's:
// the signature must be checked against the published key, not the name.
func TestForgedPublishedKeyIDOnAnotherKeyIsRefused(t *testing.T) {
	t.Parallel()
	refused(t, func(c credential) string {
		var key any
		alg := jose.RS256
		if c.name == "IAP" {
			key, alg = must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader)), jose.ES256
		} else {
			key = must(rsa.GenerateKey(rand.Reader, 2048))
		}
		s := must(jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: c.is.KeyID}}, nil))
		return must(must(s.Sign(must(json.Marshal(c.claims())))).CompactSerialize())
	})
}

func TestIAPIgnoresUnsignedIdentityHeaders(t *testing.T) {
	t.Parallel()
	c := credentials(t)[0]
	r, _ := http.NewRequest("GET", "/", nil)
	r.Header.Set("X-Goog-Authenticated-User-Email", "accounts.google.com:"+alice)
	r.Header.Set("X-Goog-Authenticated-User-Id", "accounts.google.com:1234")
	if id, err := c.auth.Authenticate(r); err != nil || id != access.Anonymous {
		t.Errorf("unsigned IAP headers alone = %q, %v; want anonymous", id, err)
	}
	// With a signed assertion for alice, the unsigned header naming
	// someone else changes nothing.
	r.Header.Set("X-Goog-Authenticated-User-Email", "accounts.google.com:mallory@example.com")
	c.carry(r, c.is.Sign(c.claims()))
	if id, err := c.auth.Authenticate(r); err != nil || id != access.User(alice) {
		t.Errorf("assertion for alice with a header naming mallory = %q, %v; want %s", id, err, access.User(alice))
	}
}

// A token for another service account is that account, never the one a
// setting names; a person's token, or an unverified email, is refused.
func TestIDTokenMapsToItsOwnServiceAccount(t *testing.T) {
	t.Parallel()
	c := credentials(t)[1]
	other := "intruder@other-proj.iam.gserviceaccount.com"
	cl := c.claims()
	cl["email"] = other
	if id, err := c.authenticate(c.is.Sign(cl)); err != nil || id != access.ServiceAccount(other) {
		t.Errorf("a token for %s = %q, %v; want %s", other, id, err, access.ServiceAccount(other))
	}
	cl["email"] = alice
	if id, err := c.authenticate(c.is.Sign(cl)); err == nil {
		t.Errorf("a person's ID token authenticated as %q", id)
	}
	cl["email"], cl["email_verified"] = ciAccount, false
	if id, err := c.authenticate(c.is.Sign(cl)); err == nil {
		t.Errorf("a token with an unverified email authenticated as %q", id)
	}
}

// unsigned builds a compact JWS with the given header, claims and
// signature function (nil: no signature).
func unsigned(header, claims map[string]any, sign func([]byte) []byte) string {
	enc := base64.RawURLEncoding
	in := enc.EncodeToString(must(json.Marshal(header))) + "." + enc.EncodeToString(must(json.Marshal(claims)))
	var sig []byte
	if sign != nil {
		sig = sign([]byte(in))
	}
	return in + "." + enc.EncodeToString(sig)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestStaticTokens(t *testing.T) {
	t.Parallel()
	ci, err := access.ParseIdentity("serviceAccount:" + ciAccount)
	if err != nil {
		t.Fatal(err)
	}
	tok, line := signin.NewToken(ci)
	bob, bobLine := signin.NewToken(access.User("bob@example.com"))
	path := t.TempDir() + "/tokens"
	writeFile(t, path, "# CI\n"+line+"\n\n"+bobLine+"\n")
	st, err := signin.ReadStaticTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(readFile(t, path), tok) {
		t.Fatal("the token file holds the token itself")
	}
	auth := func(header string) (access.Identity, error) {
		r, _ := http.NewRequest("GET", "/", nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		return st.Authenticate(r)
	}
	for _, tt := range []struct {
		header string
		want   access.Identity
	}{
		{"Bearer " + tok, ci},
		{"bearer " + bob, access.User("bob@example.com")},
		{"", access.Anonymous},
		{"Basic dXNlcjpwYXNz", access.Anonymous},
	} {
		if id, err := auth(tt.header); err != nil || id != tt.want {
			t.Errorf("%q = %q, %v; want %q", tt.header, id, err, tt.want)
		}
	}
	for _, bad := range []string{
		"Bearer " + tok[:len(tok)-1] + "x", // wrong
		"Bearer ",                          // empty
		"Bearer sundial_short",             // short
		"Bearer " + strings.ToUpper(tok),   // wrong case
		"Bearer " + tok + "0",              // longer
	} {
		if id, err := auth(bad); err == nil {
			t.Errorf("%q authenticated as %q", bad, id)
		}
	}
}

func TestStaticTokenFileBadLineNamesFileAndLine(t *testing.T) {
	t.Parallel()
	_, good := signin.NewToken(access.User("bob@example.com"))
	for _, tt := range []struct{ name, line, want string }{
		{"the token itself", "sundial_0123456789abcdef0123456789abcdef serviceAccount:" + ciAccount, "want sha256:"},
		{"short hash", "sha256:abcd serviceAccount:" + ciAccount, "64 hex digits"},
		{"bad identity", strings.Fields(good)[0] + " ci@example.com", "want user:<email> or serviceAccount:<email>"},
		{"anonymous", strings.Fields(good)[0] + " anonymous", "want user:<email>"},
		{"no identity", strings.Fields(good)[0], "want sha256:<hex> <identity>"},
		{"duplicate", good, "the same hash as line 2"},
	} {
		path := t.TempDir() + "/tokens"
		writeFile(t, path, "# tokens\n"+good+"\n"+tt.line+"\n")
		_, err := signin.ReadStaticTokens(path)
		if err == nil || !strings.Contains(err.Error(), path+":3:") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want an error naming %s:3 and %q", tt.name, err, path, tt.want)
		}
	}
}
