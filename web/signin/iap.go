package signin

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/sundial-cron/sundial/access"
)

// Identity-Aware Proxy's issuer, the header its signed assertion comes in,
// and where its signing keys are published.
const (
	IAPIssuer  = "https://cloud.google.com/iap"
	IAPHeader  = "X-Goog-IAP-JWT-Assertion"
	IAPKeysURL = "https://www.gstatic.com/iap/verify/public_key-jwk"
)

// IAPOptions configure the Identity-Aware Proxy authenticator.
type IAPOptions struct {
	// Audience the assertion must be for. Its format depends on what IAP
	// guards: /projects/PROJECT_NUMBER/apps/PROJECT_ID for App Engine,
	// /projects/PROJECT_NUMBER/global/backendServices/SERVICE_ID for a
	// load balancer's backend service (Cloud Run behind a load balancer),
	// /projects/PROJECT_NUMBER/locations/REGION/services/SERVICE for IAP on
	// Cloud Run itself. Required.
	Audience string
	// KeysURL: default IAPKeysURL; tests serve their own.
	KeysURL string
	// Now is the clock. Required.
	Now func() time.Time
	// Client fetches the keys; default http.DefaultClient.
	Client *http.Client
}

// IAP authenticates the signed assertion Identity-Aware Proxy puts in
// every request it lets through. The unsigned X-Goog-Authenticated-User-*
// headers it also adds are never read: anything that reaches the server
// around the proxy could set them.
type IAP struct {
	verifier *verifier
}

// NewIAP returns the IAP authenticator.
func NewIAP(opts IAPOptions) (*IAP, error) {
	switch {
	case !strings.HasPrefix(opts.Audience, "/projects/"):
		return nil, fmt.Errorf("iap: audience %q: want /projects/NUMBER/apps/ID, /projects/NUMBER/global/backendServices/ID or /projects/NUMBER/locations/REGION/services/NAME", opts.Audience)
	case opts.Now == nil:
		return nil, errors.New("iap: Now: missing")
	}
	if opts.KeysURL == "" {
		opts.KeysURL = IAPKeysURL
	}
	return &IAP{verifier: newVerifier(IAPIssuer, opts.KeysURL, opts.Audience, oidc.ES256, opts.Client, opts.Now)}, nil
}

// Authenticate implements Authenticator: a request without the header is
// anonymous; one whose assertion fails is refused.
func (a *IAP) Authenticate(r *http.Request) (access.Identity, error) {
	raw := r.Header.Get(IAPHeader)
	if raw == "" {
		return access.Anonymous, nil
	}
	tok, err := a.verifier.verify(r.Context(), raw)
	if err != nil {
		return access.Anonymous, fmt.Errorf("iap assertion: %w", err)
	}
	var claims struct {
		Email string `json:"email"`
	}
	if err := tok.Claims(&claims); err != nil {
		return access.Anonymous, fmt.Errorf("iap assertion: %w", err)
	}
	if claims.Email == "" {
		return access.Anonymous, errors.New("iap assertion: no email")
	}
	id := access.User(claims.Email)
	if isServiceAccount(claims.Email) {
		id = access.ServiceAccount(claims.Email)
	}
	if _, err := access.ParseIdentity(string(id)); err != nil {
		return access.Anonymous, fmt.Errorf("iap assertion: %w", err)
	}
	return id, nil
}
