package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	gcds "cloud.google.com/go/datastore"

	"github.com/sundial-cron/sundial/web/signin"
)

// signinFlags are serve's sign-in settings: how people (OIDC, IAP) and
// machines (service accounts' ID tokens, static tokens) prove who they
// are. None set is the local single-user mode.
type signinFlags struct {
	oidcIssuer, oidcClientID, oidcSecretFile string
	cookieKeyFile                            string
	sessionTTL                               time.Duration
	insecureCookies                          bool
	iapAudience                              string
	idTokenAudience                          string
	staticTokensFile                         string
}

func (s *signinFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.oidcIssuer, "oidc-issuer", "", "sign people in with this OpenID Connect issuer (https://accounts.google.com); the callback is --public-url + "+signin.CallbackPath)
	fs.StringVar(&s.oidcClientID, "oidc-client-id", "", "the OAuth client id registered with --oidc-issuer")
	fs.StringVar(&s.oidcSecretFile, "oidc-client-secret-file", "", "a file holding the OAuth client's secret")
	fs.StringVar(&s.cookieKeyFile, "cookie-key-file", "", "a file of session cookie keys, one a line, 32 random bytes in base64 each; the first seals (head -c 32 /dev/urandom | base64)")
	fs.DurationVar(&s.sessionTTL, "session-ttl", signin.DefaultSessionTTL, "how long a sign-in lasts, whatever is done with it")
	fs.BoolVar(&s.insecureCookies, "insecure-dev-cookies", false, "session cookies without Secure, for development at http://localhost only")
	fs.StringVar(&s.iapAudience, "iap-audience", "", "behind Identity-Aware Proxy: the audience of its signed header (/projects/NUMBER/apps/ID, ...)")
	fs.StringVar(&s.idTokenAudience, "id-token-audience", "", "take Google-signed ID tokens of service accounts for this audience as bearer tokens (by convention --public-url)")
	fs.StringVar(&s.staticTokensFile, "static-tokens-file", "", "a file mapping SHA-256 hashes of static bearer tokens to identities (sundial token new)")
}

// enabled reports whether any sign-in is configured: if not, the server
// runs in the local single-user mode.
func (s *signinFlags) enabled() bool {
	return s.oidcIssuer != "" || s.iapAudience != "" || s.idTokenAudience != "" || s.staticTokensFile != ""
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

// signinSetup is sign-in built from the flags.
type signinSetup struct {
	// authenticators tell who makes a request, tried in order: the
	// session cookie, IAP's header, service accounts' ID tokens.
	authenticators []signin.Authenticator
	// static are the static bearer tokens, tried last: they refuse any
	// token they do not know, so the deprecated admin token goes before
	// them. Nil without --static-tokens-file.
	static *signin.StaticTokens
	// oidc serves the sign-in flow under /auth/; nil without
	// --oidc-issuer.
	oidc *signin.OIDC
}

// build reads the files the flags name and contacts the OIDC issuer.
// revocations is the list of ended sessions every instance sees.
func (s *signinFlags) build(ctx context.Context, publicURL string, revocations func() (signin.Revocations, error), now func() time.Time, logger *slog.Logger) (signinSetup, error) {
	var out signinSetup
	if s.oidcIssuer != "" {
		if publicURL == "" {
			return out, errors.New("--oidc-issuer needs --public-url, the server's URL as browsers reach it")
		}
		if s.oidcClientID == "" || s.cookieKeyFile == "" {
			return out, errors.New("--oidc-issuer needs --oidc-client-id and --cookie-key-file")
		}
		keys, err := signin.ReadKeyFile(s.cookieKeyFile)
		if err != nil {
			return out, fmt.Errorf("--cookie-key-file: %w", err)
		}
		secret := ""
		if s.oidcSecretFile != "" {
			b, err := os.ReadFile(s.oidcSecretFile)
			if err != nil {
				return out, fmt.Errorf("--oidc-client-secret-file: %w", err)
			}
			secret = strings.TrimSpace(string(b))
		}
		rev, err := revocations()
		if err != nil {
			return out, fmt.Errorf("--oidc-issuer: the list of ended sessions: %w", err)
		}
		if s.insecureCookies {
			logger.Warn("INSECURE: session cookies are sent over plain http (--insecure-dev-cookies): for development at localhost only")
		}
		out.oidc, err = signin.NewOIDC(ctx, signin.OIDCOptions{
			Issuer: s.oidcIssuer, ClientID: s.oidcClientID, ClientSecret: secret,
			RedirectURL: strings.TrimSuffix(publicURL, "/") + signin.CallbackPath,
			Keys:        keys, Revocations: rev, SessionTTL: s.sessionTTL,
			InsecureCookies: s.insecureCookies, Now: now, Logger: logger,
		})
		if err != nil {
			return out, err
		}
		out.authenticators = append(out.authenticators, out.oidc)
	}
	if s.iapAudience != "" {
		iap, err := signin.NewIAP(signin.IAPOptions{Audience: s.iapAudience, Now: now})
		if err != nil {
			return out, fmt.Errorf("--iap-audience: %w", err)
		}
		out.authenticators = append(out.authenticators, iap)
	}
	if s.idTokenAudience != "" {
		ids, err := signin.NewIDTokens(signin.IDTokenOptions{Audience: s.idTokenAudience, Now: now})
		if err != nil {
			return out, fmt.Errorf("--id-token-audience: %w", err)
		}
		out.authenticators = append(out.authenticators, ids)
	}
	if s.staticTokensFile != "" {
		st, err := signin.ReadTokenFile(s.staticTokensFile)
		if err != nil {
			return out, fmt.Errorf("--static-tokens-file: %w", err)
		}
		out.static = st
	}
	if s.enabled() {
		logger.Info("sign-in", "oidc_issuer", s.oidcIssuer, "iap_audience", s.iapAudience,
			"id_token_audience", s.idTokenAudience, "static_tokens_file", s.staticTokensFile)
	}
	return out, nil
}

// mount serves the sign-in flow under /auth/ beside api.
func (s signinSetup) mount(api http.Handler) http.Handler {
	if s.oidc == nil {
		return api
	}
	mux := http.NewServeMux()
	mux.Handle("/auth/", s.oidc.Handler())
	mux.Handle("/", api)
	return mux
}
