package signin

import (
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"

	"github.com/sundial-cron/sundial/access"
)

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
// New chains it only in the single-user mode, where no sign-in is set, and
// sets the roles' LocalAdministrator with it (Setup.Roles): once people
// sign in, being local proves nothing, since any process of the server's
// user — a job's url_fetch or command among them — is local.
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
