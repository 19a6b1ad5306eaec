package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sundial-cron/sundial/web"
	"github.com/sundial-cron/sundial/web/signin"
)

// The instances are the server's own: only an administrator may list
// them, whatever the projects grant; a caller who is no one is asked to
// sign in; a shape that keeps no list answers 404, as JSON.
func TestOnlyAnAdministratorListsTheInstances(t *testing.T) {
	h := newHarness(t)
	list := []web.Instance{{ID: "vm-1-abc", Host: "vm", PID: 1, Version: "v0.2.0", Started: t0, Seen: t0.Add(time.Minute), Alive: true, Self: true, SettingsDiffer: []string{}}}
	for _, c := range []struct {
		name      string
		instances func(context.Context) ([]web.Instance, error)
		identity  string
		want      int
	}{
		{"an administrator", func(context.Context) ([]web.Instance, error) { return list, nil }, "user:root@example.com", http.StatusOK},
		{"a signed-in user", func(context.Context) ([]web.Instance, error) { return list, nil }, "user:alice@example.com", http.StatusForbidden},
		{"anonymous", func(context.Context) ([]web.Instance, error) { return list, nil }, "", http.StatusUnauthorized},
		{"an administrator of a shape without the list", nil, "user:root@example.com", http.StatusNotFound},
	} {
		handler := web.New(web.Options{Engine: h.eng, Store: h.st, Roles: mustRoles(t), Authenticators: signin.Chain{testIdentity{}}, Instances: c.instances})
		r := httptest.NewRequest("GET", "/api/v1/instances", nil)
		if c.identity != "" {
			r.Header.Set("X-Test-Identity", c.identity)
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, r)
		var body struct {
			Instances []web.Instance
			Error     string
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("%s: %d %s: not JSON: %v", c.name, rec.Code, rec.Body, err)
		}
		if rec.Code != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, rec.Code, rec.Body, c.want)
		}
		if got := len(body.Instances); (c.want == http.StatusOK) != (got == 1) || (c.want != http.StatusOK) == (body.Error == "") {
			t.Errorf("%s: %s: want the list only with a 200, an error otherwise", c.name, rec.Body)
		}
	}
}
