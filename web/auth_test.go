package web_test

import (
	"net/http"
	"strings"
	"testing"
)

func TestWhoMayCallTheAPI(t *testing.T) {
	h := fixture(t)
	const read, change = "GET", "POST"
	paths := map[string]string{
		read:   "/api/v1/projects/billing/jobs/nightly",
		change: "/api/v1/projects/billing/jobs/nightly/resume",
	}
	cases := []struct {
		name          string
		token         string // the server's admin token
		loopbackAdmin bool
		method        string
		req           req
		status        int
	}{
		{"a local caller may read", adminToken, true, read, req{}, 200},
		{"a local caller may change", adminToken, true, change, req{}, 200},
		{"a local caller over IPv6 may change", adminToken, true, change, req{header: http.Header{}, host: "[::1]:8080"}, 200},
		{"a local caller naming localhost may change", adminToken, true, change, req{host: "localhost:8080"}, 200},
		{"a local same-origin browser may change", adminToken, true, change, req{header: http.Header{"Sec-Fetch-Site": {"same-origin"}}}, 200},
		{"a remote caller with the token may read", adminToken, true, read, req{remote: true, token: adminToken}, 200},
		{"a remote caller with the token may change", adminToken, true, change, req{remote: true, token: adminToken}, 200},
		{"a remote caller with the token in lower case scheme may change", adminToken, true, change, req{remote: true, header: http.Header{"Authorization": {"bearer " + adminToken}}}, 200},
		{"a remote caller without the token may not read", adminToken, true, read, req{remote: true}, 401},
		{"a remote caller with a wrong token may not change", adminToken, true, change, req{remote: true, token: adminToken + "x"}, 401},
		{"a remote caller with a prefix of the token may not change", adminToken, true, change, req{remote: true, token: adminToken[:10]}, 401},
		{"a remote caller with basic auth may not change", adminToken, true, change, req{remote: true, header: http.Header{"Authorization": {"Basic YWRtaW46YWRtaW4="}}}, 401},
		{"a remote caller with a token a server without one does not know is refused", "", true, read, req{remote: true, token: adminToken}, 401},
		{"a remote caller from a loopback proxy needs the token", adminToken, true, read, req{header: http.Header{"Forwarded": {"for=198.51.100.2"}}}, 401},
		{"a proxied caller with the token may change", adminToken, true, change, req{token: adminToken, header: http.Header{"X-Forwarded-For": {"198.51.100.2"}}}, 200},
		{"a local caller needs the token when loopback is not the admin", adminToken, false, change, req{}, 401},
		{"a local caller with the token may change when loopback is not the admin", adminToken, false, change, req{token: adminToken}, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h.t = t
			h.handler = newHandler(h, h.st, c.token, c.loopbackAdmin)
			c.req.method, c.req.path = c.method, paths[c.method]
			if a := h.do(c.req); a.status != c.status {
				t.Errorf("status %d, want %d: %s", a.status, c.status, a.raw)
			}
		})
	}
}

func TestMetricsNeedNoToken(t *testing.T) {
	h := fixture(t)
	a := h.do(req{method: "GET", path: "/metrics", remote: true})
	if a.status != 200 || !strings.Contains(a.raw, "sundial_invocations_ended_total") {
		t.Errorf("remote scrape: %d\n%.300s", a.status, a.raw)
	}
}

func TestHealthzNeedsNoToken(t *testing.T) {
	h := fixture(t)
	if a := h.do(req{method: "GET", path: "/healthz", remote: true}); a.status != 200 || a.raw != "ok\n" {
		t.Errorf("remote health check: %d %q", a.status, a.raw)
	}
}

// Every header a proxy, load balancer or CDN adds to name the client it
// forwards for takes locality away: a caller that reached the server
// through a local proxy needs the token, whichever proxy it was.
func TestEveryForwardingHeaderMakesACallerRemote(t *testing.T) {
	h := fixture(t)
	h.handler = newHandler(h, h.st, adminToken, true)
	for _, name := range []string{
		"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Forwarded-Port", "X-Forwarded-Prefix",
		"X-Forwarded-Server", "X-Original-Forwarded-For", "X-Real-IP", "Via", "X-Client-IP", "True-Client-IP",
		"CF-Connecting-IP", "CF-Connecting-IPv6", "CF-Ray", "CDN-Loop", "X-Cluster-Client-IP", "Fastly-Client-IP",
		"Fly-Client-IP", "X-Envoy-External-Address", "X-AppEngine-User-IP", "X-Azure-ClientIP", "X-Azure-SocketIP",
		"X-ProxyUser-IP", "X-Vercel-Forwarded-For", "X-Original-URL",
	} {
		t.Run(name, func(t *testing.T) {
			h.t = t
			hdr := http.Header{}
			hdr.Set(name, "198.51.100.2")
			if a := h.do(req{method: "GET", path: "/api/v1/projects/billing/jobs/nightly", header: hdr}); a.status != http.StatusUnauthorized {
				t.Errorf("a loopback caller with %s: status %d, want 401: %s", name, a.status, a.raw)
			}
		})
	}
	h.t = t
	if a := h.do(req{method: "GET", path: "/api/v1/projects/billing/jobs/nightly", header: http.Header{"User-Agent": {"curl/8"}, "Accept": {"application/json"}}}); a.status != http.StatusOK {
		t.Errorf("a loopback caller with ordinary headers: status %d, want 200: %s", a.status, a.raw)
	}
}
