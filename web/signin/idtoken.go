package signin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/internal/jwks"
)

// Google's issuer of service accounts' ID tokens, the ones Cloud Tasks,
// Cloud Scheduler and Pub/Sub push subscriptions attach to their requests
// too, and where its signing keys are published.
const (
	GoogleIssuer  = "https://accounts.google.com"
	GoogleKeysURL = "https://www.googleapis.com/oauth2/v3/certs"
)

// Leeway is how far the server's clock and the issuer's may disagree
// when a token's expiry and issue time are checked.
const Leeway = 30 * time.Second

// verifier checks the JSON Web Tokens one issuer signs for one audience:
// the signature by one of the issuer's published keys (fetched again at
// most once a minute, jwks.KeySet) with the one algorithm it signs with,
// the issuer, the audience, and the expiry and issue time within Leeway.
// It is the one check of signed ID tokens and IAP's assertions.
type verifier struct {
	v   *oidc.IDTokenVerifier
	now func() time.Time
}

func newVerifier(issuer, keysURL, audience, alg string, client *http.Client, now func() time.Time) *verifier {
	return &verifier{
		v: oidc.NewVerifier(issuer, jwks.New(keysURL, client, now), &oidc.Config{
			ClientID: audience, SupportedSigningAlgs: []string{alg},
			// Expiry is checked by verify, with the issue time and a
			// leeway.
			SkipExpiryCheck: true, Now: now,
		}),
		now: now,
	}
}

// verify returns the token raw if it passes every check.
func (v *verifier) verify(ctx context.Context, raw string) (*oidc.IDToken, error) {
	tok, err := v.v.Verify(ctx, raw)
	if err != nil {
		return nil, err
	}
	if err := checkTimes(tok, v.now()); err != nil {
		return nil, err
	}
	return tok, nil
}

// checkTimes checks a token's expiry and issue time against now, with
// Leeway either way.
func checkTimes(tok *oidc.IDToken, now time.Time) error {
	switch {
	case tok.Expiry.IsZero() || tok.IssuedAt.IsZero():
		return errors.New("no expiry or issue time")
	case !now.Before(tok.Expiry.Add(Leeway)):
		return fmt.Errorf("expired at %s", tok.Expiry.UTC().Format(time.RFC3339))
	case tok.IssuedAt.After(now.Add(Leeway)):
		return fmt.Errorf("issued in the future, at %s", tok.IssuedAt.UTC().Format(time.RFC3339))
	}
	return nil
}

// isServiceAccount reports whether email is a Google service account's.
func isServiceAccount(email string) bool {
	return strings.HasSuffix(strings.ToLower(email), ".gserviceaccount.com")
}

// IDTokenOptions configure the service-account ID token authenticator.
type IDTokenOptions struct {
	// Audience the token must be for: what the caller asks Google for
	// (gcloud auth print-identity-token --audiences=AUDIENCE), by
	// convention the server's public URL; for Cloud Tasks, Cloud
	// Scheduler and push subscriptions, the URL of the endpoint they
	// call. Required.
	Audience string
	// Issuer and KeysURL: default GoogleIssuer and GoogleKeysURL (tokens
	// naming the issuer as accounts.google.com are accepted too); tests
	// name their own.
	Issuer, KeysURL string
	// Now is the clock. Required.
	Now func() time.Time
	// Client fetches the keys; default http.DefaultClient.
	Client *http.Client
}

// IDTokens authenticates machines by a Google-signed ID token in
// "Authorization: Bearer": the identity is the service account the token
// was issued to, whichever it is. Only service accounts' tokens
// (*.gserviceaccount.com, email verified) are taken: people sign in
// through the browser, and a person's ID token for this audience would
// have been minted by some other OAuth client. It is the one verifier of
// Google-signed ID tokens: the internal endpoints' gate on Cloud Run
// (web.SignedBy) checks theirs with it too.
type IDTokens struct {
	verifier *verifier
}

// NewIDTokens returns the service-account ID token authenticator.
func NewIDTokens(opts IDTokenOptions) (*IDTokens, error) {
	switch {
	case opts.Audience == "":
		return nil, errors.New("id tokens: audience: missing")
	case opts.Now == nil:
		return nil, errors.New("id tokens: Now: missing")
	}
	if opts.Issuer == "" {
		opts.Issuer, opts.KeysURL = GoogleIssuer, GoogleKeysURL
	}
	if opts.KeysURL == "" {
		return nil, fmt.Errorf("id tokens: keys URL of issuer %s: missing", opts.Issuer)
	}
	return &IDTokens{verifier: newVerifier(opts.Issuer, opts.KeysURL, opts.Audience, oidc.RS256, opts.Client, opts.Now)}, nil
}

// Authenticate implements Authenticator. It claims bearer tokens shaped
// as JSON Web Tokens; others (static tokens) it leaves alone.
func (a *IDTokens) Authenticate(r *http.Request) (access.Identity, error) {
	raw, ok := bearer(r)
	if !ok || !isJWT(raw) {
		return access.Anonymous, nil
	}
	tok, err := a.verifier.verify(r.Context(), raw)
	if err != nil {
		return access.Anonymous, fmt.Errorf("id token: %w", err)
	}
	var claims struct {
		Email    string `json:"email"`
		Verified bool   `json:"email_verified"`
	}
	if err := tok.Claims(&claims); err != nil {
		return access.Anonymous, fmt.Errorf("id token: %w", err)
	}
	switch {
	case claims.Email == "" || !claims.Verified:
		return access.Anonymous, fmt.Errorf("id token: no verified email (email %q, verified %t)", claims.Email, claims.Verified)
	case !isServiceAccount(claims.Email):
		return access.Anonymous, fmt.Errorf("id token: %s is not a service account: people sign in through the browser", claims.Email)
	}
	id := access.ServiceAccount(claims.Email)
	if _, err := access.ParseIdentity(string(id)); err != nil {
		return access.Anonymous, fmt.Errorf("id token: %w", err)
	}
	return id, nil
}
