package signin

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/sundial-cron/sundial/access"
)

// Settings say who gets in: how people (OIDC, IAP) and machines (service
// accounts' ID tokens, static tokens, the deprecated admin token) prove
// who they are, and whether the server may run in the local single-user
// mode. The fields but LocalMode are `sundial serve` flags, which New's
// errors name. No sign-in set is the local single-user mode, where
// LocalMode allows it.
type Settings struct {
	// PublicURL is the server's URL as browsers reach it (--public-url):
	// the OIDC callback is under it.
	PublicURL string
	// OIDCIssuer (--oidc-issuer) signs people in with an OpenID Connect
	// issuer, as the OAuth client OIDCClientID (--oidc-client-id) whose
	// secret OIDCClientSecretFile holds (--oidc-client-secret-file).
	OIDCIssuer, OIDCClientID, OIDCClientSecretFile string
	// CookieKeyFile (--cookie-key-file) holds the keys that seal the
	// session cookies (ReadKeyFile), OIDC's and the token sign-in's; a
	// session lasts SessionTTL (--session-ttl).
	CookieKeyFile string
	SessionTTL    time.Duration
	// InsecureDevCookies (--insecure-dev-cookies) sends session cookies
	// without Secure, for development at http://localhost only.
	InsecureDevCookies bool
	// IAPAudience (--iap-audience) takes Identity-Aware Proxy's signed
	// header for this audience (IAP).
	IAPAudience string
	// IDTokenAudience (--id-token-audience) takes service accounts'
	// Google-signed ID tokens for this audience (IDTokens).
	IDTokenAudience string
	// StaticTokensFile (--static-tokens-file) maps static bearer tokens'
	// hashes to identities (ReadStaticTokens).
	StaticTokensFile string
	// AdminTokenFile (--admin-token-file) holds the deprecated admin
	// token (AdminToken). It is not sign-in: with it alone the server
	// still runs in the single-user mode.
	AdminTokenFile string
	// LocalMode lets the server run in the local single-user mode when no
	// sign-in is set: a caller on its own machine is its administrator
	// (LocalCaller). The embedded and PostgreSQL shapes, which run on
	// their operator's machines, set it; the cloud shape, whose instances
	// share no machine with anyone, does not.
	LocalMode bool
	// OneProcess says the server is one process, which may seal the
	// token sign-in's sessions with a key of its own made at start; the
	// shapes of many instances (PostgreSQL, cloud) need
	// --cookie-key-file, shared by every instance, for that sign-in.
	OneProcess bool
}

// signIn reports whether any sign-in is set.
func (s Settings) signIn() bool {
	return s.OIDCIssuer != "" || s.IAPAudience != "" || s.IDTokenAudience != "" || s.StaticTokensFile != ""
}

// SecretFiles are the files the settings name that hold secrets, or the
// hashes that stand for them: the admin token, the static tokens' hashes,
// the session cookie keys and the OIDC client secret. No job may read
// them.
func (s Settings) SecretFiles() []string {
	var files []string
	for _, name := range []string{s.AdminTokenFile, s.StaticTokensFile, s.CookieKeyFile, s.OIDCClientSecretFile} {
		if name != "" {
			files = append(files, name)
		}
	}
	return files
}

// Setup is sign-in as Settings set it up: what the web server needs. Its
// zero value takes every caller for anonymous.
type Setup struct {
	chain      Chain
	oidc       *OIDC        // nil without OIDCIssuer
	tokens     *TokenSignIn // nil without token sign-in (tokenSignIn)
	singleUser bool
	adminToken bool
}

// New reads the files the settings name, contacts the OIDC issuer, and
// chains the authenticators in this order: the local caller (in the
// single-user mode only), the session cookies (OIDC's, the token
// sign-in's), IAP's header, service accounts' ID tokens, the admin token,
// the static tokens. The static tokens go last because they refuse any
// bearer token they do not know; the admin token, which leaves such
// tokens to others, goes before them. revocations returns the list of
// ended sessions and used sign-in states that every instance sees; it is
// called only when people sign in with sessions (OIDC, or tokens in the
// console).
func New(ctx context.Context, s Settings, revocations func() (Revocations, error), now func() time.Time, logger *slog.Logger) (Setup, error) {
	out := Setup{singleUser: s.LocalMode && !s.signIn()}
	if out.singleUser {
		out.chain = append(out.chain, LocalCaller{})
	}
	var static *StaticTokens
	if s.StaticTokensFile != "" {
		var err error
		if static, err = ReadStaticTokens(s.StaticTokensFile); err != nil {
			return Setup{}, fmt.Errorf("--static-tokens-file: %w", err)
		}
	}
	if err := checkOIDC(s); err != nil {
		return Setup{}, err
	}
	var keys *Sealer
	var rev Revocations
	if s.OIDCIssuer != "" || tokenSignIn(s) {
		var err error
		if keys, err = cookieKeys(s.CookieKeyFile, logger); err != nil {
			return Setup{}, err
		}
		if rev, err = revocations(); err != nil {
			return Setup{}, fmt.Errorf("the list of ended sessions: %w", err)
		}
	}
	if s.OIDCIssuer != "" {
		o, err := newOIDC(ctx, s, keys, rev, now, logger)
		if err != nil {
			return Setup{}, err
		}
		out.oidc = o
		out.chain = append(out.chain, o)
	}
	if tokenSignIn(s) {
		ts, err := NewTokenSignIn(TokenSignInOptions{Tokens: static, Keys: keys, Revocations: rev, SessionTTL: s.SessionTTL, Now: now, Logger: logger})
		if err != nil {
			return Setup{}, err
		}
		out.tokens = ts
		out.chain = append(out.chain, ts)
	}
	if s.IAPAudience != "" {
		iap, err := NewIAP(IAPOptions{Audience: s.IAPAudience, Now: now})
		if err != nil {
			return Setup{}, fmt.Errorf("--iap-audience: %w", err)
		}
		out.chain = append(out.chain, iap)
	}
	if s.IDTokenAudience != "" {
		ids, err := NewIDTokens(IDTokenOptions{Audience: s.IDTokenAudience, Now: now})
		if err != nil {
			return Setup{}, fmt.Errorf("--id-token-audience: %w", err)
		}
		out.chain = append(out.chain, ids)
	}
	if s.AdminTokenFile != "" {
		token, err := ReadTokenFile(s.AdminTokenFile)
		if err != nil {
			return Setup{}, fmt.Errorf("--admin-token-file: %w", err)
		}
		out.adminToken = true
		out.chain = append(out.chain, AdminToken(token))
	}
	if static != nil {
		out.chain = append(out.chain, static)
	}
	if s.signIn() {
		logger.Info("sign-in", "oidc_issuer", s.OIDCIssuer, "iap_audience", s.IAPAudience,
			"id_token_audience", s.IDTokenAudience, "static_tokens_file", s.StaticTokensFile, "token_sign_in", tokenSignIn(s))
	}
	return out, nil
}

// tokenSignIn reports whether the console offers sign-in with a static
// token: with static tokens, where its sessions hold across the server's
// instances. That is with --cookie-key-file, which every instance shares,
// or in one process (OneProcess), which may seal with a key of its own.
func tokenSignIn(s Settings) bool {
	return s.StaticTokensFile != "" && (s.CookieKeyFile != "" || s.OneProcess)
}

// cookieKeys are the keys that seal the session cookies: those of file
// (--cookie-key-file), else (the token sign-in of one process, as OIDC
// needs the file) a key made at start, which a restart forgets, ending
// every session.
func cookieKeys(file string, logger *slog.Logger) (*Sealer, error) {
	if file == "" {
		logger.Info("token sign-in seals its sessions with a key made at start: a restart signs everyone out (--cookie-key-file keeps them)")
		key := make([]byte, KeyLen)
		rand.Read(key)
		return NewSealer(key)
	}
	keys, err := ReadKeyFile(file)
	if err != nil {
		return nil, fmt.Errorf("--cookie-key-file: %w", err)
	}
	return keys, nil
}

// checkOIDC refuses OIDC settings that lack what the flow needs, before
// anything is read.
func checkOIDC(s Settings) error {
	switch {
	case s.OIDCIssuer == "":
		return nil
	case s.PublicURL == "":
		return errors.New("--oidc-issuer needs --public-url, the server's URL as browsers reach it")
	case s.OIDCClientID == "" || s.CookieKeyFile == "":
		return errors.New("--oidc-issuer needs --oidc-client-id and --cookie-key-file")
	}
	return nil
}

// newOIDC builds the sign-in flow of s.OIDCIssuer, which checkOIDC passed.
func newOIDC(ctx context.Context, s Settings, keys *Sealer, rev Revocations, now func() time.Time, logger *slog.Logger) (*OIDC, error) {
	secret := ""
	if s.OIDCClientSecretFile != "" {
		b, err := os.ReadFile(s.OIDCClientSecretFile)
		if err != nil {
			return nil, fmt.Errorf("--oidc-client-secret-file: %w", err)
		}
		secret = strings.TrimSpace(string(b))
	}
	if s.InsecureDevCookies {
		logger.Warn("INSECURE: session cookies are sent over plain http (--insecure-dev-cookies): for development at localhost only")
	}
	return NewOIDC(ctx, OIDCOptions{
		Issuer: s.OIDCIssuer, ClientID: s.OIDCClientID, ClientSecret: secret,
		RedirectURL: strings.TrimSuffix(s.PublicURL, "/") + CallbackPath,
		Keys:        keys, Revocations: rev, SessionTTL: s.SessionTTL,
		InsecureCookies: s.InsecureDevCookies, Now: now, Logger: logger,
	})
}

// Chain tells who makes each request.
func (s Setup) Chain() Chain { return s.chain }

// SingleUser reports whether the server runs in the local single-user
// mode: no sign-in is set and LocalMode allows it.
func (s Setup) SingleUser() bool { return s.singleUser }

// Roles returns the Roles of settings with what sign-in adds to them: a
// local caller is the administrator in the single-user mode and never
// otherwise, and the admin token's identity is an administrator.
func (s Setup) Roles(settings access.Settings) (*access.Roles, error) {
	settings.LocalAdministrator = s.singleUser
	if s.adminToken {
		settings.Administrators = append(slices.Clone(settings.Administrators), access.Member(AdminTokenIdentity))
	}
	return access.NewRoles(settings)
}

// SignInPath is where the console sends a signed-out person to sign in:
// SignInPath with OIDC, "" without.
func (s Setup) SignInPath() string {
	if s.oidc == nil {
		return ""
	}
	return SignInPath
}

// Mount serves the sign-in flows under /auth/ beside api: OIDC's, the
// token sign-in's, and the sign-out that ends either session.
func (s Setup) Mount(api http.Handler) http.Handler {
	if s.oidc == nil && s.tokens == nil {
		return api
	}
	auth := http.NewServeMux()
	var ends []func(http.ResponseWriter, *http.Request) error
	if s.oidc != nil {
		auth.Handle("GET "+SignInPath, s.oidc.SignIn())
		auth.Handle("GET "+CallbackPath, s.oidc.Callback())
		ends = append(ends, s.oidc.end)
	}
	if s.tokens != nil {
		auth.Handle(TokenSignInPath, s.tokens.Handler())
		ends = append(ends, s.tokens.end)
	}
	// Sign-out changes state, so a page of another site must not be able
	// to post it.
	auth.Handle("POST "+SignOutPath, http.NewCrossOriginProtection().Handler(signOut(ends...)))
	mux := http.NewServeMux()
	mux.Handle("/auth/", auth)
	mux.Handle("/", api)
	return mux
}
