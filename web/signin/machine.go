package signin

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/internal/jwks"
)

// Google's issuer of service accounts' ID tokens and its keys.
const (
	GoogleIssuer  = "https://accounts.google.com"
	GoogleKeysURL = "https://www.googleapis.com/oauth2/v3/certs"
)

// IDTokenOptions configure the service-account ID token authenticator.
type IDTokenOptions struct {
	// Audience the token must be for: what the caller asks Google for
	// (gcloud auth print-identity-token --audiences=AUDIENCE), by
	// convention the server's public URL. Required.
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
// have been minted by some other OAuth client.
type IDTokens struct {
	verifier *oidc.IDTokenVerifier
	now      func() time.Time
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
	keys := jwks.New(opts.KeysURL, opts.Client, opts.Now)
	return &IDTokens{
		verifier: oidc.NewVerifier(opts.Issuer, keys, &oidc.Config{
			ClientID: opts.Audience, SupportedSigningAlgs: []string{oidc.RS256},
			SkipExpiryCheck: true, Now: opts.Now,
		}),
		now: opts.Now,
	}, nil
}

// Authenticate implements Authenticator. It claims bearer tokens shaped
// as JSON Web Tokens; others (static tokens) it leaves alone.
func (a *IDTokens) Authenticate(r *http.Request) (access.Identity, error) {
	raw, ok := bearer(r)
	if !ok || !isJWT(raw) {
		return access.Anonymous, nil
	}
	tok, err := a.verifier.Verify(r.Context(), raw)
	if err != nil {
		return access.Anonymous, fmt.Errorf("id token: %w", err)
	}
	if err := checkTimes(tok, a.now()); err != nil {
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

// TokenPrefix starts every static token, so that a leaked one is easy to
// find by secret scanners and to tell from other credentials.
const TokenPrefix = "sundial_"

// MinTokenLen is the shortest static token taken.
const MinTokenLen = 32

// NewToken returns a fresh random static token and the line of the token
// file that maps it to id.
func NewToken(id access.Identity) (token, line string) {
	b := make([]byte, 32)
	rand.Read(b)
	token = TokenPrefix + hex.EncodeToString(b)
	sum := sha256.Sum256([]byte(token))
	return token, "sha256:" + hex.EncodeToString(sum[:]) + " " + string(id)
}

// StaticTokens authenticates machines by a static bearer token whose
// SHA-256 hash the operator's token file maps to an identity. The file
// holds only hashes: reading it grants nothing.
type StaticTokens struct {
	sums [][sha256.Size]byte
	ids  []access.Identity
}

// ReadTokenFile reads a token file: one token a line,
//
//	sha256:<64 hex digits> <identity>
//
// (the line `sundial token new` prints); blank lines and lines starting
// with # are skipped. A bad line is an error naming the file and line.
func ReadTokenFile(path string) (*StaticTokens, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	st := &StaticTokens{}
	seen := map[[sha256.Size]byte]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s:%d: want sha256:<hex> <identity>", path, n)
		}
		hexSum, ok := strings.CutPrefix(fields[0], "sha256:")
		raw, err := hex.DecodeString(hexSum)
		if !ok || err != nil || len(raw) != sha256.Size {
			return nil, fmt.Errorf("%s:%d: %q: want sha256: and 64 hex digits, the hash of the token (never the token itself)", path, n, fields[0])
		}
		id, err := access.ParseIdentity(fields[1])
		if err != nil || (id.Kind() != access.KindUser && id.Kind() != access.KindServiceAccount) {
			return nil, fmt.Errorf("%s:%d: %q: want user:<email> or serviceAccount:<email>", path, n, fields[1])
		}
		sum := [sha256.Size]byte(raw)
		if prev, dup := seen[sum]; dup {
			return nil, fmt.Errorf("%s:%d: the same hash as line %d", path, n, prev)
		}
		seen[sum] = n
		st.sums = append(st.sums, sum)
		st.ids = append(st.ids, id)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// Authenticate implements Authenticator. It claims bearer tokens that
// are not shaped as JSON Web Tokens: one that is not in the file is
// refused.
func (s *StaticTokens) Authenticate(r *http.Request) (access.Identity, error) {
	token, ok := bearer(r)
	if !ok || isJWT(token) {
		return access.Anonymous, nil
	}
	if len(token) < MinTokenLen {
		return access.Anonymous, fmt.Errorf("bearer token too short (%d bytes; tokens have at least %d)", len(token), MinTokenLen)
	}
	sum := sha256.Sum256([]byte(token))
	// Every entry is compared, in constant time, so the answer's time
	// says nothing of which hash, or how much of one, matched.
	match := -1
	for i := range s.sums {
		if subtle.ConstantTimeCompare(sum[:], s.sums[i][:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return access.Anonymous, errors.New("bearer token not known to this server")
	}
	return s.ids[match], nil
}
