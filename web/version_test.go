package web_test

import (
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// Anyone who reaches the server may ask which build runs, in the API and
// in /metrics' sundial_build_info, as Prometheus's own servers say: the
// answer holds no secret.
func TestVersionIsOpenInTheAPIAndTheMetrics(t *testing.T) {
	h := newHarness(t)
	a := h.do(req{method: "GET", path: "/api/v1/version", remote: true})
	if a.status != http.StatusOK || a.body["go_version"] != runtime.Version() || a.body["version"] == nil {
		t.Errorf("GET /api/v1/version from a remote caller: %d %s; want 200 with the build's version and Go's", a.status, a.raw)
	}
	m := h.do(req{method: "GET", path: "/metrics", remote: true})
	if !strings.Contains(m.raw, `sundial_build_info{goversion="`+runtime.Version()+`"`) {
		t.Errorf("/metrics has no sundial_build_info of this build:\n%s", m.raw)
	}
}
