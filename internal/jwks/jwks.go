// Package jwks holds an issuer's published signing keys (a JSON Web Key
// Set) for verifying tokens, fetched again when a token names a key not
// yet seen, but never faster than a forger can make it.
package jwks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
)

// RefetchEvery bounds how often the issuer's keys are fetched again
// because a token's signature matched none of them. Anyone can send a
// token that names an unknown key; go-oidc's RemoteKeySet fetches again
// for each one (it only joins fetches under way), so forged tokens would
// have the server fetch from Google as fast as they arrive. The issuer
// publishes a new key well before signing with it, so a real token meets
// an unknown key rarely, and is delivered again if refused.
const RefetchEvery = time.Minute

// fetchTimeout bounds one fetch of the keys.
const fetchTimeout = 10 * time.Second

// KeySet is an oidc.KeySet over an issuer's published keys that fetches
// them again at most once per RefetchEvery.
type KeySet struct {
	url    string
	client *http.Client
	now    func() time.Time

	keys atomic.Pointer[oidc.StaticKeySet] // nil before the first fetch that succeeded
	// fetch holds a token while a goroutine fetches or reads fetched, so
	// that concurrent misses share one fetch.
	fetch   chan struct{}
	fetched time.Time // the start of the last fetch, whether it succeeded or not
}

// New returns the key set published at url, fetched with client (nil:
// http.DefaultClient) on first use; now is the clock that paces fetches.
func New(url string, client *http.Client, now func() time.Time) *KeySet {
	if client == nil {
		client = http.DefaultClient
	}
	return &KeySet{url: url, client: client, now: now, fetch: make(chan struct{}, 1)}
}

// VerifySignature implements oidc.KeySet.
func (k *KeySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
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
// the last fetch was RefetchEvery ago or more, and returns the current
// set.
func (k *KeySet) refresh(ctx context.Context, stale *oidc.StaticKeySet) (*oidc.StaticKeySet, error) {
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
	if !k.fetched.IsZero() && now.Sub(k.fetched) < RefetchEvery {
		return nil, fmt.Errorf("failed to verify the token's signature with the issuer's keys (fetched %v ago; again at most every %v)",
			now.Sub(k.fetched).Round(time.Second), RefetchEvery)
	}
	k.fetched = now
	// A fetch shared by other requests must not end with this one's.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	defer cancel()
	keys, err := k.get(ctx)
	if err != nil {
		return nil, fmt.Errorf("fetching the issuer's keys from %s: %w", k.url, err)
	}
	k.keys.Store(keys)
	return keys, nil
}

// get fetches and parses the issuer's JSON Web Key Set.
func (k *KeySet) get(ctx context.Context) (*oidc.StaticKeySet, error) {
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
