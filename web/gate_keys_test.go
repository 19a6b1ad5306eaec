package web_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/coreos/go-oidc/v3/oidc/oidctest"

	"github.com/sundial-cron/sundial/task/cloudtasks/cloudtaskstest"
	"github.com/sundial-cron/sundial/web"
	"github.com/sundial-cron/sundial/web/signin"
)

// Forged tokens naming keys the issuer never published cost at most one
// fetch of its keys per minute however many arrive, so the gate cannot be
// made to fetch from Google as fast as an attacker sends; real tokens are
// admitted throughout from the keys already fetched.
func TestSignedByGateFetchesKeysAtMostOncePerMinute(t *testing.T) {
	t.Parallel()
	is := newIssuer(t)
	var fetches atomic.Int64
	keys := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		resp, err := http.Get(is.KeysURL())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(keys.Close)
	var mu sync.Mutex
	now := t0
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	gate, err := web.SignedBy(account, signin.IDTokenOptions{Issuer: is.URL(), KeysURL: keys.URL, Audience: audience, Now: clock})
	if err != nil {
		t.Fatal(err)
	}

	good := cloudtaskstest.Claims{Audience: audience, Email: account, EmailVerified: true, IssuedAt: t0, Expiry: t0.Add(time.Hour)}
	forgerKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := json.Marshal(map[string]any{
		"iss": is.URL(), "aud": audience, "sub": account, "email": account, "email_verified": true,
		"iat": t0.Unix(), "exp": t0.Add(time.Hour).Unix(),
	})
	if err != nil {
		t.Fatal(err)
	}
	admit := func(token string) error {
		r := httptest.NewRequest("POST", "/internal/tasks", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		return gate.Admit(r)
	}
	forge := func(n int) {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range n / 8 {
					if err := admit(oidctest.SignIDToken(forgerKey, rand.Text(), oidc.RS256, string(claims))); err == nil {
						t.Error("a forged token was admitted")
						return
					}
				}
			})
		}
		wg.Wait()
	}

	if err := admit(is.Sign(good)); err != nil {
		t.Fatalf("a real token: %v", err)
	}
	forge(1000)
	if n := fetches.Load(); n != 1 {
		t.Fatalf("%d fetches of the keys after a real token and 1000 forged ones in the same minute; want 1", n)
	}
	if err := admit(is.Sign(good)); err != nil {
		t.Fatalf("a real token after the forged ones: %v", err)
	}

	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	forge(1000)
	if n := fetches.Load(); n != 2 {
		t.Fatalf("%d fetches of the keys after 1000 more forged tokens a minute later; want 2", n)
	}
	if err := admit(is.Sign(good)); err != nil {
		t.Fatalf("a real token at the end: %v", err)
	}
}
