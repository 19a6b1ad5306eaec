package web_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/access"
	"github.com/sundial-cron/sundial/web"
	"github.com/sundial-cron/sundial/web/signin"
)

// TestReimportTakesASignedWebhookOrAnAdministrator: GitHub's HMAC of the
// body and GitLab's token with the shared secret, or an administrator,
// import at once; a wrong signature, a signature over another body, a
// stranger or a caller with no credential is refused with a JSON error
// and imports nothing.
func TestReimportTakesASignedWebhookOrAnAdministrator(t *testing.T) {
	h := newHarness(t)
	var imports atomic.Int32
	roles, err := access.NewRoles(access.Settings{Administrators: []access.Member{"user:root@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte("hook-secret")
	handler := web.New(web.Options{Engine: h.eng, Store: h.st, Roles: roles, Authenticators: signin.Chain{testIdentity{}},
		WebhookSecret: secret, Reimport: func(context.Context) (web.Refused, error) { imports.Add(1); return nil, nil }})
	body := `{"ref":"refs/heads/main"}`
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(body))
	github := "sha256=" + hex.EncodeToString(mac.Sum(nil))

	for _, c := range []struct {
		name    string
		headers map[string]string
		body    string
		want    int
	}{
		{"GitHub's signature", map[string]string{"X-Hub-Signature-256": github}, body, http.StatusOK},
		{"GitLab's token", map[string]string{"X-Gitlab-Token": string(secret)}, body, http.StatusOK},
		{"an administrator", map[string]string{"X-Test-Identity": "user:root@example.com"}, "", http.StatusOK},
		{"a wrong signature", map[string]string{"X-Hub-Signature-256": "sha256=" + strings.Repeat("0", 64)}, body, http.StatusUnauthorized},
		{"a signature of another body", map[string]string{"X-Hub-Signature-256": github}, body + " ", http.StatusUnauthorized},
		{"a wrong token", map[string]string{"X-Gitlab-Token": "guess"}, body, http.StatusUnauthorized},
		{"a wrong signature from an administrator", map[string]string{"X-Gitlab-Token": "guess", "X-Test-Identity": "user:root@example.com"}, body, http.StatusUnauthorized},
		{"a stranger", map[string]string{"X-Test-Identity": "user:mallory@example.com"}, body, http.StatusForbidden},
		{"no credential", nil, body, http.StatusForbidden},
	} {
		before := imports.Load()
		req := httptest.NewRequest("POST", "/api/v1/configs:reimport", strings.NewReader(c.body))
		for k, v := range c.headers {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		var answer map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil || rec.Code != c.want {
			t.Errorf("%s: %d %s; want %d and JSON", c.name, rec.Code, rec.Body, c.want)
			continue
		}
		imported := imports.Load() - before
		if ok := c.want == http.StatusOK; (imported == 1) != ok || (!ok && answer["error"] == nil) {
			t.Errorf("%s: %d imports, answer %v", c.name, imported, answer)
		}
	}
}

// TestReimportWithoutARepoIsNotFound: a server that reads a directory has
// nothing to reimport.
func TestReimportWithoutARepoIsNotFound(t *testing.T) {
	h := newHarness(t)
	rec := httptest.NewRecorder()
	newHandler(h, h.st, "", true).ServeHTTP(rec, httptest.NewRequest("POST", "/api/v1/configs:reimport", nil))
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "no config repo") {
		t.Errorf("%d %s; want a 404 saying there is no repo", rec.Code, rec.Body)
	}
}

// A push whose commit the import refuses is answered 422, so the pusher's
// webhook delivery shows it failed; before, it was answered 200
// {"reimported": "ok"}. An administrator is told each refused project and
// its error; a webhook, whose secret every repo of a projects list shares,
// only how many, for a project's errors quote its config.
func TestReimportOfARefusedRevisionSaysSo(t *testing.T) {
	h := newHarness(t)
	secret := []byte("hook-secret")
	refused := web.Refused{"billing": "billing.yaml:12: jobs[1].schedule: field 1 (minute): 61 is out of range 0-59"}
	handler := web.New(web.Options{Engine: h.eng, Store: h.st, Roles: mustRoles(t), Authenticators: signin.Chain{testIdentity{}},
		WebhookSecret: secret, Reimport: func(context.Context) (web.Refused, error) { return refused, nil }})
	for _, c := range []struct {
		name, header, value string
		details             bool
	}{
		{"a webhook", "X-Gitlab-Token", string(secret), false},
		{"an administrator", "X-Test-Identity", "user:root@example.com", true},
	} {
		req := httptest.NewRequest("POST", "/api/v1/configs:reimport", strings.NewReader("{}"))
		req.Header.Set(c.header, c.value)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		var answer struct {
			Reimported      string
			Refused         map[string]string
			RefusedProjects int `json:"refused_projects"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil || rec.Code != http.StatusUnprocessableEntity || answer.Reimported != "refused" {
			t.Errorf("%s: %d %s; want 422, refused", c.name, rec.Code, rec.Body)
			continue
		}
		switch {
		case c.details && answer.Refused["billing"] != refused["billing"]:
			t.Errorf("%s: %s; want billing and its error", c.name, rec.Body)
		case !c.details && (strings.Contains(rec.Body.String(), "billing") || answer.RefusedProjects != 1):
			t.Errorf("%s: %s; want how many were refused, no project's name or error", c.name, rec.Body)
		}
	}
}

func mustRoles(t *testing.T) *access.Roles {
	roles, err := access.NewRoles(access.Settings{Administrators: []access.Member{"user:root@example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	return roles
}

// Callers that send big bodies and stall cost the server no memory for
// them: an unsigned call is refused before its body is read, and a
// signed one's body streams through the hash. Before, each body was read
// whole (up to 4 MiB) before the signature or the caller was checked:
// 100 stalled connections took 560 MB.
func TestReimportHoldsNoBodyInMemory(t *testing.T) {
	h := newHarness(t)
	var imports atomic.Int32
	handler := web.New(web.Options{Engine: h.eng, Store: h.st, Roles: mustRoles(t), Authenticators: signin.Chain{testIdentity{}},
		WebhookSecret: []byte("hook-secret"), Reimport: func(context.Context) (web.Refused, error) { imports.Add(1); return nil, nil }})
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)

	const conns, sent = 40, 3 << 20
	chunk := make([]byte, 64<<10)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var opened []net.Conn
	t.Cleanup(func() {
		for _, c := range opened {
			c.Close()
		}
	})
	for i := range conns {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		opened = append(opened, c)
		signature := ""
		if i%2 == 0 {
			signature = "X-Hub-Signature-256: sha256=" + strings.Repeat("0", 64) + "\r\n"
		}
		fmt.Fprintf(c, "POST /api/v1/configs:reimport HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n", 4<<20, signature)
		// An unsigned call is answered at once and its body left unread;
		// the writes then stop at the socket's buffers.
		c.SetWriteDeadline(time.Now().Add(2 * time.Second))
		for n := 0; n < sent; n += len(chunk) {
			if _, err := c.Write(chunk); err != nil {
				break
			}
		}
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapInuse) - int64(before.HeapInuse)
	if limit := int64(conns) * 256 << 10; grown > limit {
		t.Errorf("%d stalled callers grew the heap by %d MiB; want at most %d MiB: their bodies are held", conns, grown>>20, limit>>20)
	}
	if n := imports.Load(); n != 0 {
		t.Errorf("%d imports; want none", n)
	}
}
