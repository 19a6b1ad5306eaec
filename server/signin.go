package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/web/signin"
)

// SignIn is how people (OIDC, IAP) and machines (service accounts' ID
// tokens, static tokens) prove who they are. None set is the local
// single-user mode.
type SignIn struct {
	OIDCIssuer, OIDCClientID, OIDCSecretFile string
	CookieKeyFile                            string
	SessionTTL                               time.Duration
	InsecureCookies                          bool
	IAPAudience                              string
	IDTokenAudience                          string
	StaticTokensFile                         string
}

const defaultSessionTTL = signin.DefaultSessionTTL

// Enabled reports whether any sign-in is configured: if not, the server
// runs in the local single-user mode.
func (s *SignIn) Enabled() bool {
	return s.OIDCIssuer != "" || s.IAPAudience != "" || s.IDTokenAudience != "" || s.StaticTokensFile != ""
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
func (s *SignIn) build(ctx context.Context, publicURL string, revocations func() (signin.Revocations, error), now func() time.Time, logger *slog.Logger) (signinSetup, error) {
	var out signinSetup
	if s.OIDCIssuer != "" {
		if publicURL == "" {
			return out, errors.New("--oidc-issuer needs --public-url, the server's URL as browsers reach it")
		}
		if s.OIDCClientID == "" || s.CookieKeyFile == "" {
			return out, errors.New("--oidc-issuer needs --oidc-client-id and --cookie-key-file")
		}
		keys, err := signin.ReadKeyFile(s.CookieKeyFile)
		if err != nil {
			return out, fmt.Errorf("--cookie-key-file: %w", err)
		}
		secret := ""
		if s.OIDCSecretFile != "" {
			b, err := os.ReadFile(s.OIDCSecretFile)
			if err != nil {
				return out, fmt.Errorf("--oidc-client-secret-file: %w", err)
			}
			secret = strings.TrimSpace(string(b))
		}
		rev, err := revocations()
		if err != nil {
			return out, fmt.Errorf("--oidc-issuer: the list of ended sessions: %w", err)
		}
		if s.InsecureCookies {
			logger.Warn("INSECURE: session cookies are sent over plain http (--insecure-dev-cookies): for development at localhost only")
		}
		out.oidc, err = signin.NewOIDC(ctx, signin.OIDCOptions{
			Issuer: s.OIDCIssuer, ClientID: s.OIDCClientID, ClientSecret: secret,
			RedirectURL: strings.TrimSuffix(publicURL, "/") + signin.CallbackPath,
			Keys:        keys, Revocations: rev, SessionTTL: s.SessionTTL,
			InsecureCookies: s.InsecureCookies, Now: now, Logger: logger,
		})
		if err != nil {
			return out, err
		}
		out.authenticators = append(out.authenticators, out.oidc)
	}
	if s.IAPAudience != "" {
		iap, err := signin.NewIAP(signin.IAPOptions{Audience: s.IAPAudience, Now: now})
		if err != nil {
			return out, fmt.Errorf("--iap-audience: %w", err)
		}
		out.authenticators = append(out.authenticators, iap)
	}
	if s.IDTokenAudience != "" {
		ids, err := signin.NewIDTokens(signin.IDTokenOptions{Audience: s.IDTokenAudience, Now: now})
		if err != nil {
			return out, fmt.Errorf("--id-token-audience: %w", err)
		}
		out.authenticators = append(out.authenticators, ids)
	}
	if s.StaticTokensFile != "" {
		st, err := signin.ReadTokenFile(s.StaticTokensFile)
		if err != nil {
			return out, fmt.Errorf("--static-tokens-file: %w", err)
		}
		out.static = st
	}
	if s.Enabled() {
		logger.Info("sign-in", "oidc_issuer", s.OIDCIssuer, "iap_audience", s.IAPAudience,
			"id_token_audience", s.IDTokenAudience, "static_tokens_file", s.StaticTokensFile)
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
