package web_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

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
		WebhookSecret: secret, Reimport: func(context.Context) error { imports.Add(1); return nil }})
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
