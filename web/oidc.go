package web

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/sundial-cron/sundial/internal/jwks"
)

// Google's issuer of the OIDC tokens that Cloud Tasks and Cloud Scheduler
// attach to their requests, and where its signing keys are published.
const (
	GoogleIssuer  = "https://accounts.google.com"
	GoogleKeysURL = "https://www.googleapis.com/oauth2/v3/certs"
)

// OIDCOptions configure an OIDC gate.
type OIDCOptions struct {
	// Issuer and KeysURL: default GoogleIssuer and GoogleKeysURL. Tests
	// name their own issuer.
	Issuer, KeysURL string
	// Audience the token must be for: the one the queue or the scheduler
	// job asks for (by default the endpoint's URL). Required.
	Audience string
	// ServiceAccount is the email the token must be for: the account the
	// queue or scheduler job signs as. Required.
	ServiceAccount string
	// Now is the clock a token's expiry is checked against. Required.
	Now func() time.Time
	// Client fetches the issuer's keys. Default http.DefaultClient.
	Client *http.Client
}

// OIDC admits requests that carry a bearer token signed by the issuer's
// current keys, for the expected audience and service account, and not
// expired: what Cloud Tasks HTTP targets and Cloud Scheduler send on Cloud
// Run, where any header can come from outside.
type OIDC struct {
	verifier *oidc.IDTokenVerifier
	account  string
}

// NewOIDC returns an OIDC gate. It fetches the issuer's keys on first use
// and again when a token's signature matches none of them, at most once
// a minute (jwks.KeySet).
func NewOIDC(opts OIDCOptions) (*OIDC, error) {
	switch {
	case opts.Audience == "":
		return nil, errors.New("oidc gate: audience: missing")
	case !strings.Contains(opts.ServiceAccount, "@"):
		return nil, fmt.Errorf("oidc gate: service account %q: want the account's email", opts.ServiceAccount)
	case opts.Now == nil:
		return nil, errors.New("oidc gate: Now: missing")
	}
	if opts.Issuer == "" {
		opts.Issuer, opts.KeysURL = GoogleIssuer, GoogleKeysURL
	}
	if opts.KeysURL == "" {
		return nil, fmt.Errorf("oidc gate: keys URL of issuer %s: missing", opts.Issuer)
	}
	keys := jwks.New(opts.KeysURL, opts.Client, opts.Now)
	return &OIDC{
		verifier: oidc.NewVerifier(opts.Issuer, keys, &oidc.Config{ClientID: opts.Audience, Now: opts.Now}),
		account:  opts.ServiceAccount,
	}, nil
}

// Admit implements Gate.
func (o *OIDC) Admit(r *http.Request) error {
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || raw == "" {
		return errors.New("no bearer token")
	}
	tok, err := o.verifier.Verify(r.Context(), raw)
	if err != nil {
		return err
	}
	var claims struct {
		Email    string `json:"email"`
		Verified bool   `json:"email_verified"`
	}
	if err := tok.Claims(&claims); err != nil {
		return fmt.Errorf("token claims: %w", err)
	}
	if claims.Email != o.account || !claims.Verified {
		return fmt.Errorf("token is for %q (verified %t), want %q", claims.Email, claims.Verified, o.account)
	}
	return nil
}
