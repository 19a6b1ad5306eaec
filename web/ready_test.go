package web_test

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/store/sqlite"
	"github.com/sundial-cron/sundial/web"
)

func TestReadyzIsOkWhileTheStoreAnswersAndNeedsNoToken(t *testing.T) {
	h := fixture(t)
	for _, method := range []string{"GET", "HEAD"} {
		a := h.do(req{method: method, path: "/readyz", remote: true})
		if a.status != 200 || (method == "GET" && a.raw != "ok\n") {
			t.Errorf("%s /readyz from a remote caller without a token: %d %q", method, a.status, a.raw)
		}
	}
}

// A store that fails takes the instance out of its load balancer, with a
// reason that names no part of the store's error (which may name the
// database), while /healthz still answers: liveness does not depend on
// the database, or its outage would restart every instance.
func TestReadyzIs503WhenTheStoreFailsAndHealthzIsNot(t *testing.T) {
	h := newHarness(t)
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "closed.db"), sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	st.Close() // every read now fails
	roles, err := access.NewRoles(access.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	h.handler = web.New(web.Options{Engine: h.eng, Store: st, Roles: roles, Now: h.clock, Logger: slog.New(slog.NewTextHandler(&log, nil))})

	a := h.do(req{method: "GET", path: "/readyz", remote: true})
	if want := "not ready: the store failed a read (the server's log says why)\n"; a.status != 503 || a.raw != want {
		t.Errorf("/readyz over a closed store: %d %q, want 503 %q", a.status, a.raw, want)
	}
	if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("/readyz's reason is %s, want text/plain", ct)
	}
	if !strings.Contains(log.String(), "closed") {
		t.Errorf("the store's error is not in the log:\n%s", log.String())
	}
	if a := h.do(req{method: "GET", path: "/healthz", remote: true}); a.status != 200 || a.raw != "ok\n" {
		t.Errorf("/healthz over a closed store: %d %q, want 200 ok", a.status, a.raw)
	}
}
