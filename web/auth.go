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
)

// auth decides who may call the API. Reads and changes alike need the
// admin: job logs and target specs (URLs, headers, argv) are not for the
// network at large. A local caller is the admin when LoopbackAdmin is on;
// anyone else must present the admin token.
//
// A local caller is one that connected from a loopback address, to a
// loopback host name, and whose request carries no forwarding header.
// Behind a reverse proxy on the same machine RemoteAddr is the proxy's
// loopback address, so the forwarding header the proxy adds (every common
// one adds X-Forwarded-For or Forwarded) is what marks the request as not
// local (proxyHeader lists what counts as one); forwarding headers are
// never trusted to make a caller local. The
// Host check stops DNS rebinding: a web page whose name resolves to
// 127.0.0.1 still sends its own name as Host.
type auth struct {
	tokenSum      [sha256.Size]byte
	hasToken      bool
	loopbackAdmin bool
	// csrf refuses browsers' cross-origin changes: a page open in a local
	// browser must not be able to pause jobs through a local caller's
	// rights with a form post.
	csrf *http.CrossOriginProtection
}

func newAuth(token string, loopbackAdmin bool) *auth {
	a := &auth{loopbackAdmin: loopbackAdmin, csrf: http.NewCrossOriginProtection()}
	if token != "" {
		a.tokenSum, a.hasToken = sha256.Sum256([]byte(token)), true
	}
	return a
}

// check returns nil if the caller may make the request.
func (a *auth) check(r *http.Request, mutates bool) error {
	if mutates {
		if err := a.csrf.Check(r); err != nil {
			return &apiError{status: http.StatusForbidden, msg: "cross-origin request refused: " + err.Error()}
		}
	}
	if a.loopbackAdmin && local(r) {
		return nil
	}
	if !a.hasToken {
		return &apiError{status: http.StatusForbidden,
			msg: "only local callers may use the API: the server has no admin token (--admin-token-file)"}
	}
	given, ok := bearer(r)
	if !ok {
		return &apiError{status: http.StatusUnauthorized, msg: "missing the admin token: send Authorization: Bearer <token>",
			header: http.Header{"Www-Authenticate": {`Bearer realm="sundial"`}}}
	}
	// Hashing first makes the comparison's time independent of the
	// token's length too.
	sum := sha256.Sum256([]byte(given))
	if subtle.ConstantTimeCompare(sum[:], a.tokenSum[:]) != 1 {
		return &apiError{status: http.StatusUnauthorized, msg: "the bearer token is not the admin token",
			header: http.Header{"Www-Authenticate": {`Bearer realm="sundial", error="invalid_token"`}}}
	}
	return nil
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
// behalf of anyone. A local client that sends one of these itself needs
// the token, which fails closed.
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

// ReadTokenFile reads the admin token from a file (--admin-token-file):
// its content without surrounding white space. A missing file, an empty
// one or a token shorter than 16 bytes is an error.
func ReadTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("admin token file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if len(token) < minTokenLen {
		return "", fmt.Errorf("admin token file %s: the token has %d bytes; want at least %d", path, len(token), minTokenLen)
	}
	if strings.ContainsAny(token, " \t\r\n") {
		return "", fmt.Errorf("admin token file %s: the token holds white space; want one line with one token", path)
	}
	return token, nil
}
