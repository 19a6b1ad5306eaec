package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"

	gcds "cloud.google.com/go/datastore"

	"github.com/sundial-cron/sundial/web/signin"
)

// registerSignin registers serve's sign-in flags into s: how people (OIDC,
// IAP) and machines (service accounts' ID tokens, static tokens, the
// deprecated admin token) prove who they are. None set is the local
// single-user mode.
func registerSignin(fs *flag.FlagSet, s *signin.Settings) {
	fs.StringVar(&s.OIDCIssuer, "oidc-issuer", "", "sign people in with this OpenID Connect issuer (https://accounts.google.com); the callback is --public-url + "+signin.CallbackPath)
	fs.StringVar(&s.OIDCClientID, "oidc-client-id", "", "the OAuth client id registered with --oidc-issuer")
	fs.StringVar(&s.OIDCClientSecretFile, "oidc-client-secret-file", "", "a file holding the OAuth client's secret")
	fs.StringVar(&s.CookieKeyFile, "cookie-key-file", "", "a file of session cookie keys, one a line, 32 random bytes in base64 each; the first seals (head -c 32 /dev/urandom | base64)")
	fs.DurationVar(&s.SessionTTL, "session-ttl", signin.DefaultSessionTTL, "how long a sign-in lasts, whatever is done with it")
	fs.BoolVar(&s.InsecureDevCookies, "insecure-dev-cookies", false, "session cookies without Secure, for development at http://localhost only")
	fs.StringVar(&s.IAPAudience, "iap-audience", "", "behind Identity-Aware Proxy: the audience of its signed header (/projects/NUMBER/apps/ID, ...)")
	fs.StringVar(&s.IDTokenAudience, "id-token-audience", "", "take Google-signed ID tokens of service accounts for this audience as bearer tokens (by convention --public-url)")
	fs.StringVar(&s.StaticTokensFile, "static-tokens-file", "", "a file mapping SHA-256 hashes of static bearer tokens to identities (sundial token new)")
	fs.StringVar(&s.AdminTokenFile, "admin-token-file", "", "deprecated: a file holding a token that makes its bearer an administrator (audited as serviceAccount:admin-token@sundial.invalid)")
}

// buildSignin builds serve's sign-in from its flags and --public-url. Only
// the embedded shape may run in the single-user mode: the cloud shape's
// instances share no machine with their callers.
func buildSignin(ctx context.Context, f serveFlags, now func() time.Time, logger *slog.Logger) (signin.Setup, error) {
	s := f.signin
	s.PublicURL = f.cloud.publicURL
	s.LocalMode = f.backend != "cloud"
	return signin.New(ctx, s, revocations(ctx, f, now), now, logger)
}

// revocations returns the list of ended sessions and used sign-in states
// for the shape: in the embedded one, the one process's memory; in the
// cloud one, Datastore, which every instance shares (a sign-out on one
// instance must end the session on all).
func revocations(ctx context.Context, f serveFlags, now func() time.Time) func() (signin.Revocations, error) {
	return func() (signin.Revocations, error) {
		if f.backend != "cloud" {
			return signin.NewMemory(now), nil
		}
		client, err := gcds.NewClient(ctx, f.cloud.project)
		if err != nil {
			return nil, fmt.Errorf("datastore: %w", err)
		}
		return signin.NewDatastore(client, f.cloud.namespace), nil
	}
}
