package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
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
// per keyRefetchEvery.
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
	keys := &keySet{url: opts.KeysURL, client: opts.Client, now: opts.Now, fetch: make(chan struct{}, 1)}
	if keys.client == nil {
		keys.client = http.DefaultClient
	}
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

// keyRefetchEvery bounds how often the issuer's keys are fetched again
// because a token's signature matched none of them. Anyone can send a
// token that names an unknown key; go-oidc's RemoteKeySet fetches again
// for each one (it only joins fetches under way), so forged tokens would
// have the server fetch from Google as fast as they arrive. The issuer
// publishes a new key well before signing with it, so a real token meets
// an unknown key rarely, and is delivered again if refused.
const keyRefetchEvery = time.Minute

// keyFetchTimeout bounds one fetch of the keys.
const keyFetchTimeout = 10 * time.Second

// keySet is an oidc.KeySet over the issuer's published keys that fetches
// them again at most once per keyRefetchEvery.
type keySet struct {
	url    string
	client *http.Client
	now    func() time.Time

	keys atomic.Pointer[oidc.StaticKeySet] // nil before the first fetch that succeeded
	// fetch holds a token while a goroutine fetches or reads fetched, so
	// that concurrent misses share one fetch.
	fetch   chan struct{}
	fetched time.Time // the start of the last fetch, whether it succeeded or not
}

// VerifySignature implements oidc.KeySet.
func (k *keySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	keys := k.keys.Load()
	if keys != nil {
		if payload, err := keys.VerifySignature(ctx, jwt); err == nil {
			return payload, nil
		}
	}
	keys, err := k.refresh(ctx, keys)
	if err != nil {
		return nil, err
	}
	return keys.VerifySignature(ctx, jwt)
}

// refresh fetches the keys again if stale is still the current set and
// the last fetch was keyRefetchEvery ago or more, and returns the current
// set.
func (k *keySet) refresh(ctx context.Context, stale *oidc.StaticKeySet) (*oidc.StaticKeySet, error) {
	select {
	case k.fetch <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-k.fetch }()
	if keys := k.keys.Load(); keys != stale {
		return keys, nil // fetched while this goroutine waited
	}
	now := k.now()
	if !k.fetched.IsZero() && now.Sub(k.fetched) < keyRefetchEvery {
		return nil, fmt.Errorf("failed to verify the token's signature with the issuer's keys (fetched %v ago; again at most every %v)",
			now.Sub(k.fetched).Round(time.Second), keyRefetchEvery)
	}
	k.fetched = now
	// A fetch shared by other requests must not end with this one's.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), keyFetchTimeout)
	defer cancel()
	keys, err := k.get(ctx)
	if err != nil {
		return nil, fmt.Errorf("fetching the issuer's keys from %s: %w", k.url, err)
	}
	k.keys.Store(keys)
	return keys, nil
}

// get fetches and parses the issuer's JSON Web Key Set.
func (k *keySet) get(ctx context.Context) (*oidc.StaticKeySet, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", k.url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %s", resp.Status)
	}
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set); err != nil {
		return nil, err
	}
	keys := &oidc.StaticKeySet{}
	for _, key := range set.Keys {
		if key.Valid() && key.IsPublic() {
			keys.PublicKeys = append(keys.PublicKeys, key.Key)
		}
	}
	if len(keys.PublicKeys) == 0 {
		return nil, errors.New("no public keys")
	}
	return keys, nil
}
