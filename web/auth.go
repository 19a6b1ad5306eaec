package web

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"

	"github.com/sundial-cron/sundial/access"
)

// Authenticator tells who made a request.
type Authenticator interface {
	// Authenticate returns the identity the request's credentials prove;
	// access.Anonymous with a nil error when the request carries no
	// credentials of this authenticator's kind; an error when it carries
	// some that fail (expired, forged, revoked): the request is then refused
	// with 401 and a JSON error, never served as anonymous.
	Authenticate(r *http.Request) (access.Identity, error)
}

// LocalCaller is the single-user mode's authenticator: a caller on the
// server's own machine is access.Local, the administrator, with no
// credentials. A local caller is one that connected from a loopback
// address, to a loopback host name, and whose request carries no
// forwarding header. Behind a reverse proxy on the same machine RemoteAddr
// is the proxy's loopback address, so the forwarding header the proxy adds
// (every common one adds X-Forwarded-For or Forwarded) is what marks the
// request as not local (proxyHeader lists what counts as one); forwarding
// headers are never trusted to make a caller local. The Host check stops
// DNS rebinding: a web page whose name resolves to 127.0.0.1 still sends
// its own name as Host.
//
// Local means the operator, not any process on the machine: the caller's
// end of the connection must belong to the server's own user, or to root,
// who can read the server's files anyway (the kernel says whose it is:
// ConnContext). A command running as --command-user, or any other user of
// the machine, is anonymous. Where the owner cannot be told (a system
// without Linux's /proc/net), no caller is local.
//
// Use it only where no sign-in is configured (the policy's
// LocalAdministrator setting must say the same): once people sign in,
// being local proves nothing, since any process of the server's user — a
// job's url_fetch or command among them — is local.
type LocalCaller struct{}

// Authenticate implements Authenticator.
func (LocalCaller) Authenticate(r *http.Request) (access.Identity, error) {
	if local(r) && operator(r) {
		return access.Local, nil
	}
	return access.Anonymous, nil
}

// operator reports whether the caller's end of r's connection belongs to
// the server's user or to root.
func operator(r *http.Request) bool {
	uid, ok := peerUID(r)
	return ok && (uid == os.Geteuid() || uid == 0)
}

// AdminTokenIdentity is who a caller with the --admin-token-file token is:
// a machine identity of its own, which the server makes an administrator,
// so what it does is audited under a name. The .invalid domain can never
// be a real account's.
const AdminTokenIdentity access.Identity = "serviceAccount:admin-token@sundial.invalid"

// adminToken authenticates the one static token of --admin-token-file.
type adminToken struct{ sum [sha256.Size]byte }

// AdminToken returns the authenticator of the admin token: a request
// bearing it is AdminTokenIdentity. A request bearing another token is
// left to the other authenticators (anonymous, not an error): the token
// may be theirs. Deprecated in favour of sign-in's static token files,
// which name each machine.
func AdminToken(token string) Authenticator {
	return adminToken{sum: sha256.Sum256([]byte(token))}
}

func (a adminToken) Authenticate(r *http.Request) (access.Identity, error) {
	given, ok := bearer(r)
	if !ok {
		return access.Anonymous, nil
	}
	// Hashing first makes the comparison's time independent of the
	// token's length too.
	sum := sha256.Sum256([]byte(given))
	if subtle.ConstantTimeCompare(sum[:], a.sum[:]) != 1 {
		return access.Anonymous, nil
	}
	return AdminTokenIdentity, nil
}

// authenticate asks each authenticator in turn; the first that returns a
// non-anonymous identity or an error decides. A request that carries an
// Authorization header none of them accepted is refused rather than served
// as anonymous: a mistyped or revoked token must be noticed.
func (s *server) authenticate(r *http.Request) (access.Identity, error) {
	for _, a := range s.authn {
		id, err := a.Authenticate(r)
		if err != nil {
			return "", &apiError{status: http.StatusUnauthorized, msg: "credentials refused: " + err.Error(),
				header: http.Header{"Www-Authenticate": {`Bearer realm="sundial", error="invalid_token"`}}}
		}
		if id != access.Anonymous && id != "" {
			return id, nil
		}
	}
	if r.Header.Get("Authorization") != "" {
		return "", &apiError{status: http.StatusUnauthorized, msg: "credentials refused: the Authorization header holds no credential this server accepts",
			header: http.Header{"Www-Authenticate": {`Bearer realm="sundial", error="invalid_token"`}}}
	}
	return access.Anonymous, nil
}

// local reports whether the request comes from this machine itself, not
// through a proxy and not from a page that rebound its name to loopback.
func local(r *http.Request) bool {
	if _, ok := proxyHeader(r.Header); ok {
		return false
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	if ip, err := netip.ParseAddr(host); err != nil || !ip.IsLoopback() {
		return false
	}
	name := r.Host
	if h, _, err := net.SplitHostPort(name); err == nil {
		name = h
	}
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(name, "[]"))
	return err == nil && ip.IsLoopback()
}

// proxyHeaders are the names, lower case, of the headers a proxy, load
// balancer or CDN adds to say whom it forwards for, beyond those that
// proxyWords find: the standard Via, Cloudflare's CDN-Loop and CF-Ray,
// Envoy's, App Engine's, Azure's and others' own.
var proxyHeaders = map[string]bool{
	"via":                      true,
	"cdn-loop":                 true,
	"cf-ray":                   true,
	"cf-ipcountry":             true,
	"x-envoy-external-address": true,
	"x-envoy-internal":         true,
	"x-appengine-user-ip":      true,
	"x-azure-clientip":         true,
	"x-azure-socketip":         true,
	"x-proxyuser-ip":           true,
	"x-original-url":           true,
	"x-rewrite-url":            true,
}

// proxyWords are parts of header names that say a proxy forwarded the
// request: Forwarded, X-Forwarded-For, -Host, -Proto, -Port, -Prefix,
// X-Original-Forwarded-For; X-Real-IP; X-Client-IP, True-Client-IP,
// Fastly-Client-IP, X-Cluster-Client-IP, Fly-Client-IP; CF-Connecting-IP
// and -IPv6. Matching parts rather than a list of whole names also catches
// the variants proxies keep inventing.
var proxyWords = []string{"forwarded", "real-ip", "client-ip", "connecting-ip"}

// proxyHeader returns the name of a header in h that says the request came
// through a proxy. Such a header is never trusted to tell who the caller
// is, only that the connection's address is not the caller's: a local
// proxy (nginx, Caddy, a tunnel, a CDN's agent) connects from loopback on
// behalf of anyone. A local client that sends one of these itself is not
// local, which fails closed.
func proxyHeader(h http.Header) (string, bool) {
	for name := range h {
		lower := strings.ToLower(name)
		if proxyHeaders[lower] {
			return name, true
		}
		for _, w := range proxyWords {
			if strings.Contains(lower, w) {
				return name, true
			}
		}
	}
	return "", false
}

// bearer returns the token of an "Authorization: Bearer <token>" header.
func bearer(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// minTokenLen keeps a guessable token out of service.
const minTokenLen = 16

// ReadTokenFile reads a token or secret from a file (--admin-token-file,
// --config-webhook-secret-file, ...): its content without surrounding white
// space. A missing file, an empty one or a token shorter than 16 bytes is
// an error naming the file; callers prefix the flag it came from.
func ReadTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	token := strings.TrimSpace(string(b))
	if len(token) < minTokenLen {
		return "", fmt.Errorf("%s: the token has %d bytes; want at least %d", path, len(token), minTokenLen)
	}
	if strings.ContainsAny(token, " \t\r\n") {
		return "", fmt.Errorf("%s: the token holds white space; want one line with one token", path)
	}
	return token, nil
}
